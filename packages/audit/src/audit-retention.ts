// AUDIT_RETENTION_DAYS (default 365): entries older than that are deleted by the service that keeps
// them, on the retention job every service runs (@crm/service-kit's startRetention).
import { AUDIT_RETENTION_DAYS_DEFAULT } from "@crm/contracts";
import { env } from "@crm/config";
import type { AuditSchema } from "./audit-sql";
import { deleteAuditRowsBefore, type RawDatabase } from "./audit-store";

/** The setting of every service that keeps entries (each one's config spreads it). */
export const auditConfigFields = {
  /** Days an audit entry is kept (extensions §E7). */
  AUDIT_RETENTION_DAYS: env.int(AUDIT_RETENTION_DAYS_DEFAULT, 1),
};

export interface AuditRetentionOptions {
  db: RawDatabase;
  schema: AuditSchema;
  retentionDays: number;
}

/** The rule for startRetention (the shape of service-kit's RetentionRule). */
export function auditRetentionRule(options: AuditRetentionOptions): { name: string; deleteBatch(limit: number, now: Date): Promise<number> } {
  const retentionMs = options.retentionDays * 86_400_000;
  return {
    name: "audit entries",
    deleteBatch: (limit, now) => deleteAuditRowsBefore(options.db, options.schema, new Date(now.getTime() - retentionMs), limit),
  };
}
