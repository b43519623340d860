// Reading a service's AuditEntry table newest first, and deleting what is past retention. The indexes
// these statements are for are listed in each service's schema.prisma, beside the model.
import type { AuditRow } from "./audit-entry";
import { actionsOf, type AuditFilters, type AuditPosition } from "./audit-query";
import { AUDIT_COLUMN_LIST, type AuditSchema, auditTable } from "./audit-sql";

/** Prisma's client (or transaction client): raw statements with bound parameters. */
export interface RawDatabase {
  $queryRawUnsafe<T = unknown>(sql: string, ...params: unknown[]): Promise<T>;
}

export interface AuditPageQuery {
  businessId: string;
  filters: AuditFilters;
  after?: AuditPosition;
  limit: number;
}

/**
 * At most `limit` entries of the business matching the filters, after `after` in (occurredAt desc,
 * id desc) order: one index range scan per filter shape (businessId first, then the filtered column,
 * then occurredAt and id), so a page costs the same at any depth.
 */
export async function readAuditRows(db: RawDatabase, schema: AuditSchema, query: AuditPageQuery): Promise<AuditRow[]> {
  const params: unknown[] = [];
  const param = (value: unknown) => {
    params.push(value);
    return `$${params.length}`;
  };
  const where = [`"businessId" = ${param(query.businessId)}::uuid`];
  const { filters } = query;
  if (filters.action !== undefined) where.push(`"action" = ANY(${param(actionsOf(filters.action))}::text[])`);
  if (filters.actorId !== undefined) where.push(`"actorId" = ${param(filters.actorId)}`);
  if (filters.targetType !== undefined) where.push(`"targetType" = ${param(filters.targetType)}`);
  if (filters.targetId !== undefined) where.push(`"targetId" = ${param(filters.targetId)}`);
  if (filters.since !== undefined) where.push(`"occurredAt" >= ${param(filters.since)}::timestamptz`);
  if (filters.until !== undefined) where.push(`"occurredAt" < ${param(filters.until)}::timestamptz`);
  if (query.after) where.push(`("occurredAt", "id") < (${param(query.after.occurredAt)}::timestamptz, ${param(query.after.id)}::uuid)`);
  const sql = `SELECT ${AUDIT_COLUMN_LIST} FROM ${auditTable(schema)} WHERE ${where.join(" AND ")} ORDER BY "occurredAt" DESC, "id" DESC LIMIT ${param(query.limit)}::int`;
  return db.$queryRawUnsafe<AuditRow[]>(sql, ...params);
}

/**
 * The smallest UUID v7 of the millisecond `at`: an entry's id is a UUID v7 made from its occurredAt
 * (auditRow), so `id < uuidV7Floor(cutoff)` is "occurred before cutoff", found on the primary key.
 */
export function uuidV7Floor(at: Date): string {
  const hex = Math.max(0, at.getTime()).toString(16).padStart(12, "0");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-0000-0000-000000000000`;
}

/** The retention rule's statement: at most `limit` entries older than `cutoff`, picked SKIP LOCKED so instances delete disjoint rows. */
export async function deleteAuditRowsBefore(db: RawDatabase, schema: AuditSchema, cutoff: Date, limit: number): Promise<number> {
  const table = auditTable(schema);
  const rows = await db.$queryRawUnsafe<Array<{ deleted: number }>>(
    `WITH expired AS (SELECT "id" FROM ${table} WHERE "id" < $1::uuid ORDER BY "id" LIMIT $2::int FOR UPDATE SKIP LOCKED),
     gone AS (DELETE FROM ${table} AS a USING expired WHERE a."id" = expired."id" RETURNING 1)
     SELECT count(*)::int AS deleted FROM gone`,
    uuidV7Floor(cutoff),
    limit,
  );
  return rows[0]?.deleted ?? 0;
}
