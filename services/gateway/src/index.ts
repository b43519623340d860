export { start } from "./start";
export { loadConfig, type GatewayConfig } from "./config";
