export { createCrmClient, type CrmClient, type CrmClientOptions, type CrmPaths, type CrmSchemas } from "./crm-client";
export { verifyWebhookSignature } from "./webhook-signature";
export type { components, paths } from "./generated/schema";
export { changeFeed, type ChangeFeedOptions, type FeedEvent } from "./change-feed";
export { auditLog, type AuditEntry, type AuditLogOptions } from "./audit-log";
