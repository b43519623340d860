export { start, type WebhookDeliveryService, type StartOptions } from "./start";
export { loadConfig, type WebhookDeliveryConfig } from "./config";
