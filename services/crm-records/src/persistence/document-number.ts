// Invoice and quote numbers: INV-000001, QUO-000001, per business, in sequence, gap-free.
// The counter row is incremented inside the creating transaction; its row lock serialises
// concurrent creates of one business until commit, and a rollback gives the number back.
import type { Tx } from "./prisma";

/** `count` consecutive numbers in one statement (one per record a create writes): the same counter, the same lock. */
export async function nextDocumentNumbers(tx: Tx, businessId: string, prefix: "INV" | "QUO", count: number): Promise<string[]> {
  const rows = await tx.$queryRaw<Array<{ value: number }>>`
    INSERT INTO "records"."DocumentCounter" ("businessId", "kind", "next")
    VALUES (${businessId}::uuid, ${prefix}, 1 + ${count}::int)
    ON CONFLICT ("businessId", "kind") DO UPDATE SET "next" = "DocumentCounter"."next" + ${count}::int
    RETURNING "next" - ${count}::int AS "value"`;
  const first = Number(rows[0]!.value);
  return Array.from({ length: count }, (_, i) => `${prefix}-${String(first + i).padStart(6, "0")}`);
}
