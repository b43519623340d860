// Invoice and quote numbers: INV-000001, QUO-000001, per business, in sequence, gap-free.
// The counter row is incremented inside the creating transaction; its row lock serialises
// concurrent creates of one business until commit, and a rollback gives the number back.
import type { Tx } from "./prisma";

export async function nextDocumentNumber(tx: Tx, businessId: string, prefix: "INV" | "QUO"): Promise<string> {
  const rows = await tx.$queryRaw<Array<{ value: number }>>`
    INSERT INTO "records"."DocumentCounter" ("businessId", "kind", "next")
    VALUES (${businessId}::uuid, ${prefix}, 2)
    ON CONFLICT ("businessId", "kind") DO UPDATE SET "next" = "DocumentCounter"."next" + 1
    RETURNING "next" - 1 AS "value"`;
  const value = Number(rows[0]!.value);
  return `${prefix}-${String(value).padStart(6, "0")}`;
}
