export { start, type GatewayService, type GatewayStartOptions } from "./start";
export { loadConfig, type GatewayConfig } from "./config";
