// The statements of a service's AuditEntry table (each service keeps one in its own schema; the
// migrations create them alike). Writes take the change's own transaction or statement: an entry
// never commits without its change, nor a change without its entry.
import type { AuditRow } from "./audit-entry";

/** The table of a service's schema ("records", "identity", "webhooks"). */
export type AuditSchema = "records" | "identity" | "webhooks";

export function auditTable(schema: AuditSchema): string {
  return `"${schema}"."AuditEntry"`;
}

const COLUMNS = ["id", "businessId", "occurredAt", "action", "actorType", "actorId", "actorLabel", "targetType", "targetId", "changes", "requestId", "ip", "userAgent"] as const;
const CASTS: Partial<Record<(typeof COLUMNS)[number], string>> = { id: "::uuid", businessId: "::uuid", occurredAt: "::timestamptz", changes: "::jsonb" };

export const AUDIT_COLUMN_LIST = COLUMNS.map((name) => `"${name}"`).join(", ");

/** `(...)` of one row's values, appending them through `param` (which returns each placeholder). */
export function auditValues(row: AuditRow, param: (value: unknown) => string): string {
  return `(${COLUMNS.map((name) => {
    const value = name === "changes" ? (row.changes === null ? null : JSON.stringify(row.changes)) : row[name];
    return `${param(value)}${CASTS[name] ?? ""}`;
  }).join(", ")})`;
}

/** An INSERT of `rows` with its own parameters ($1...). */
export function insertAuditStatement(schema: AuditSchema, rows: readonly AuditRow[]): { sql: string; params: unknown[] } {
  const params: unknown[] = [];
  const param = (value: unknown) => {
    params.push(value);
    return `$${params.length}`;
  };
  const values = rows.map((row) => auditValues(row, param)).join(", ");
  return { sql: `INSERT INTO ${auditTable(schema)} (${AUDIT_COLUMN_LIST}) VALUES ${values}`, params };
}

/** What writes an entry inside a transaction: Prisma's interactive transaction client, or any runner of raw SQL. */
export interface RawExecutor {
  $executeRawUnsafe(sql: string, ...params: unknown[]): Promise<number>;
}

/**
 * Rows one INSERT carries at most: PostgreSQL binds at most 65,535 parameters a statement, and a
 * retention batch (RETENTION_BATCH_SIZE, unbounded) may purge more records than 65,535 / 13 columns.
 */
export const AUDIT_INSERT_ROWS_MAX = 1_000;

/** Writes `rows` through `tx` (the change's transaction), in INSERTs of at most AUDIT_INSERT_ROWS_MAX rows. */
export async function writeAuditRows(tx: RawExecutor, schema: AuditSchema, rows: readonly AuditRow[]): Promise<void> {
  for (let start = 0; start < rows.length; start += AUDIT_INSERT_ROWS_MAX) {
    const { sql, params } = insertAuditStatement(schema, rows.slice(start, start + AUDIT_INSERT_ROWS_MAX));
    await tx.$executeRawUnsafe(sql, ...params);
  }
}
