// The audit log (extensions §E7): what each service needs to write its entries in the transaction of
// the change, to read them back, to serve them to the gateway and to delete them past retention.
export { actorOf, auditContextOf, SYSTEM_CONTEXT, type AuditActor, type AuditContext, type AuditedRequest } from "./audit-context";
export { auditEntryView, auditRow, diffChanges, updateChanges, type AuditChange, type AuditRow } from "./audit-entry";
export { AuditCursorCodec, type AuditCursorState } from "./audit-cursor";
export { mergePages, newerFirst } from "./audit-merge";
export { auditPageRequest, nextAuditCursor, type AuditPageRequest, type AuditPageScope } from "./audit-page";
export { actionsOf, internalQuery, parseAuditFilters, parseAuditPerPage, type AuditFilters, type AuditPosition } from "./audit-query";
export { auditTable, auditValues, AUDIT_COLUMN_LIST, insertAuditStatement, writeAuditRows, type AuditSchema, type RawExecutor } from "./audit-sql";
export { auditConfigFields, auditRetentionRule, type AuditRetentionOptions } from "./audit-retention";
export { deleteAuditRowsBefore, readAuditRows, uuidV7Floor, type AuditPageQuery, type RawDatabase } from "./audit-store";
export { INTERNAL_AUDIT_LOG_PATH, internalAuditRouter } from "./internal-audit.router";
export { isSecretField, redactSecrets } from "./redaction";
export { AuditWriter } from "./audit-writer";
