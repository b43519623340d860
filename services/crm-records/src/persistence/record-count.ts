// Exact per-business record counts for the unfiltered list's `meta.total`, kept in the transaction
// that creates or deletes the records: the count commits (or rolls back) with the rows it counts,
// so any statement sees both or neither. Counting the business's slice of an index instead costs
// O(records in the business) on every list; this costs a sum over at most COUNT_SLOTS rows.
// Each change lands on a random slot, so concurrent creates in one business rarely wait for each
// other's row lock until commit (one row would serialise them, as document numbering does).
import type { RecordEntity } from "@crm/contracts";
import type { PrismaClient, Tx } from "./prisma";

export const COUNT_SLOTS = 8;

export async function adjustRecordCount(tx: Tx, businessId: string, entity: RecordEntity, delta: number): Promise<void> {
  if (delta === 0) return;
  const slot = Math.floor(Math.random() * COUNT_SLOTS);
  await tx.$executeRaw`
    INSERT INTO "records"."RecordCount" ("businessId", "entity", "slot", "count")
    VALUES (${businessId}::uuid, ${entity}, ${slot}, ${delta})
    ON CONFLICT ("businessId", "entity", "slot") DO UPDATE SET "count" = "RecordCount"."count" + EXCLUDED."count"`;
}

export async function recordCount(db: PrismaClient, businessId: string, entity: RecordEntity): Promise<number> {
  const rows = await db.$queryRaw<Array<{ total: bigint | number | null }>>`
    SELECT SUM("count") AS "total" FROM "records"."RecordCount" WHERE "businessId" = ${businessId}::uuid AND "entity" = ${entity}`;
  return Number(rows[0]?.total ?? 0);
}
