export { start, type GatewayService } from "./start";
export { loadConfig, type GatewayConfig } from "./config";
