export { createCrmClient, type CrmClient, type CrmClientOptions, type CrmPaths, type CrmSchemas } from "./crm-client";
export { verifyWebhookSignature } from "./webhook-signature";
export type { components, paths } from "./generated/schema";
