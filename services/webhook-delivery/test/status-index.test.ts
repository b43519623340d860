// ("status", "nextRetryAt") holds only the work owed, PENDING and RETRYING rows (migration
// 20261126220000_status_index_work_owed): a SUCCESS or FAILED outcome writes no entry there. Every
// statement that read it still reads an index, in its generic plan (they are prepared), whether the last
// ANALYZE saw work owed or not: the retry cycle's claim and the retries-due gauge read the partial index;
// delivery retention, which read the SUCCESS and FAILED rows through it, walks ("webhookId", "createdAt").
import { openTestDatabase } from "@crm/testing";
import type { Prisma } from "../src/generated/prisma/client";
import { retentionStatements } from "../src/persistence/delivery-retention";
import { databaseModes } from "./support/harness";
import { MIGRATIONS_DIR } from "./support/migrations";
import { type CapturedStatement, capturingRepository, genericPlan, seedDeliveredHistory, seedWorkOwed } from "./support/plans";

type Statement = CapturedStatement;

/** The text and values of the repository's statements that read ("status", "nextRetryAt"), captured without running them. */
async function statusStatements(now: Date): Promise<Statement[]> {
  const { repository, sent } = capturingRepository([{ due: 0 }]);
  await repository.claimDue({ now, leaseUntil: new Date(now.getTime() + 30_000), limit: 100 });
  await repository.countRetriesDue(now);
  return sent;
}

const fromPrisma = (name: string, statement: Prisma.Sql): Statement => ({ name, text: statement.text, params: statement.values });

const usedIndexes = (plan: string) => [...new Set([...plan.matchAll(/"Index Name":"([^"]+)"/g)].map((m) => m[1]!))].sort();

describe.each(databaseModes)("the status index on %s", (mode) => {
  it("holds only PENDING and RETRYING rows, and every statement that read it still reads an index", async () => {
    const { database: db, close } = await openTestDatabase(mode, { prefix: "webhooks_test", schema: "webhooks", migrationsDir: MIGRATIONS_DIR, poolSize: 1 });
    try {
      const sql = db.sql;
      const { rows: definition } = await sql.query<{ def: string }>(
        `SELECT indexdef AS def FROM pg_indexes WHERE schemaname = 'webhooks' AND indexname = 'Delivery_status_nextRetryAt_idx'`,
      );
      expect(definition[0]?.def).toContain(`(status, "nextRetryAt") WHERE (status = ANY (ARRAY['PENDING'::webhooks."DeliveryStatus", 'RETRYING'::webhooks."DeliveryStatus"]))`);

      await sql.query("SET plan_cache_mode = force_generic_plan");
      // 4 businesses x 10 webhooks x 200 events, created PENDING then delivered, as the product does;
      // the oldest month past retention.
      await seedDeliveredHistory(sql, "status-b", 6);
      const retrying = (tag: string) => seedWorkOwed(sql, { business: "status-b3", tag, events: 30, status: "RETRYING" });
      const expectIndexes = async () => {
        const now = new Date();
        const statements = [
          ...(await statusStatements(now)),
          fromPrisma("retention: deliveries", retentionStatements.deliveries(1_000, new Date(now.getTime() - 30 * 86_400_000))),
        ];
        const plans: Record<string, string[]> = {};
        for (const statement of statements) plans[statement.name] = usedIndexes(await genericPlan(sql, statement));
        expect(plans).toEqual({
          delivery_claim_due: ["Delivery_pkey", "Delivery_status_nextRetryAt_idx", "Payload_pkey", "Webhook_pkey"],
          delivery_count_retries_due: ["Delivery_status_nextRetryAt_idx"],
          "retention: deliveries": ["Delivery_pkey", "Delivery_webhookId_createdAt_id_idx"],
        });
      };

      // ANALYZE saw no work owed (the bench's, after its warm-up), then retries came.
      await sql.exec(`ANALYZE webhooks."Delivery"`);
      await retrying("before");
      await expectIndexes();
      // ANALYZE saw them.
      await sql.exec(`ANALYZE webhooks."Delivery"`);
      await retrying("after");
      await expectIndexes();

      // Retention still deletes what is past the window, and only that.
      const expired = await sql.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM webhooks."Delivery" WHERE status IN ('SUCCESS', 'FAILED') AND "updatedAt" < now() - interval '30 days'`,
      );
      expect(expired.rows[0]!.n).toBeGreaterThan(3_000);
      const batch = retentionStatements.deliveries(1_000, new Date(Date.now() - 30 * 86_400_000));
      for (let round = 0; round < 4; round++) await sql.query(batch.text, batch.values);
      const left = await sql.query<{ n: number; expired: number }>(
        `SELECT count(*)::int AS n, (count(*) FILTER (WHERE "updatedAt" < now() - interval '30 days'))::int AS expired FROM webhooks."Delivery"`,
      );
      expect(left.rows[0]).toEqual({ n: 4 * 10 * 200 + 2 * 10 * 30 - expired.rows[0]!.n, expired: 0 });
    } finally {
      await close();
    }
  }, 120_000);
});
