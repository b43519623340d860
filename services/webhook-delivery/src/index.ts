export { start, type WebhookDeliveryService, type StartOptions } from "./start";
export { loadConfig, type Config } from "./config";
