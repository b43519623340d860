// The long text sort values list cursors name by digest (domain/list-cursor.ts, issue 39). A cursor
// cannot carry a longText of 65,536 characters, and the page's last record may be edited, trashed or
// purged before the next page, so the product keeps the value itself, per business and digest: the
// next page continues after exactly the value the cursor was made after, whatever became of its record
// (extensions §E2.1). Written only when a cursor holds a value, never for the usual short cursors.
import type { RetentionRule } from "@crm/service-kit";
import { ageRetentionRule } from "./age-retention";
import type { PrismaClient } from "./prisma";
import type { RunStatement } from "./record-reads";

const TABLE = `"records"."ListCursorValue"`;
/**
 * How long a kept value outlives the last cursor made with it: a walk may pause this long between two
 * pages; after that its cursor is 410000 (start again), as a change-feed cursor past its events.
 */
export const LIST_CURSOR_VALUE_RETENTION_MS = 7 * 24 * 60 * 60 * 1000;

/**
 * Keeps `values` (digest -> value) for `businessId`. A value kept already is the same text (its
 * digest says so), so the row stays; its storedAt moves to now when it is over an hour old, so every
 * cursor is good for the retention (less that hour) while a page walked twice a second writes nothing.
 */
export async function keepCursorValues(run: RunStatement, businessId: string, values: ReadonlyMap<string, string>): Promise<void> {
  if (values.size === 0) return;
  await run(
    `INSERT INTO ${TABLE} AS kept ("businessId", "digest", "value")
SELECT $1::uuid, held.digest, held.value FROM unnest($2::text[], $3::text[]) AS held(digest, value)
ON CONFLICT ("businessId", "digest") DO UPDATE SET "storedAt" = EXCLUDED."storedAt"
WHERE kept."storedAt" < EXCLUDED."storedAt" - interval '1 hour'`,
    [businessId, [...values.keys()], [...values.values()]],
  );
}

/** The kept values of `digests` in `businessId` (digest -> value); a digest retention removed is absent. */
export async function keptCursorValues(run: RunStatement, businessId: string, digests: readonly string[]): Promise<Map<string, string>> {
  const rows = await run(`SELECT "digest", "value" FROM ${TABLE} WHERE "businessId" = $1::uuid AND "digest" = ANY($2::text[])`, [businessId, [...digests]]);
  return new Map(rows.map((row) => [row["digest"] as string, row["value"] as string]));
}

/** Values no cursor was made with for LIST_CURSOR_VALUE_RETENTION_MS. */
export function listCursorValueRetentionRule(prisma: PrismaClient): RetentionRule {
  return ageRetentionRule(prisma, { name: "list cursor values", table: TABLE, digestColumn: "digest", timestampColumn: "storedAt", retentionMs: LIST_CURSOR_VALUE_RETENTION_MS });
}
