// Exact per-business record counts for the unfiltered list's `meta.total`, kept in the transaction
// that creates or deletes the records: the count commits (or rolls back) with the rows it counts,
// so any statement sees both or neither. Counting the business's slice of an index instead costs
// O(records in the business) on every list; this costs a sum over at most COUNT_SLOTS rows.
// Each change lands on a random slot, so concurrent creates in one business rarely wait for each
// other's row lock until commit (one row would serialise them, as document numbering does): the
// lock is held through the commit's WAL flush, so a collision costs a whole commit. The list's sum
// reads at most 64 rows of one index range (D16; RECORDS_COUNT_SLOTS=false counts the rows instead).
import type { RecordEntity } from "@crm/contracts";
import type { Tx } from "./prisma";

export const COUNT_SLOTS = 64;

export async function adjustRecordCount(tx: Tx, businessId: string, entity: RecordEntity, delta: number): Promise<void> {
  if (delta === 0) return;
  const slot = Math.floor(Math.random() * COUNT_SLOTS);
  await tx.$executeRaw`
    INSERT INTO "records"."RecordCount" ("businessId", "entity", "slot", "count")
    VALUES (${businessId}::uuid, ${entity}, ${slot}, ${delta})
    ON CONFLICT ("businessId", "entity", "slot") DO UPDATE SET "count" = "RecordCount"."count" + EXCLUDED."count"`;
}

/** The statement that sums a business's count slots for one entity ($1 business, $2 entity). */
export const RECORD_COUNT_SQL = `SELECT SUM("count") AS "total" FROM "records"."RecordCount" WHERE "businessId" = $1::uuid AND "entity" = $2`;

export async function recordCount(read: (text: string, params: unknown[]) => Promise<Array<Record<string, unknown>>>, businessId: string, entity: RecordEntity): Promise<number> {
  const rows = await read(RECORD_COUNT_SQL, [businessId, entity]);
  return Number(rows[0]?.["total"] ?? 0);
}
