// Bulk recovery's statement (issue 35 item 8) reads the partial index of FAILED deliveries by webhook
// (migration 20261128120000_failed_by_webhook_concurrently), in its generic plan (it is prepared), for both its pick of
// the window's oldest and its count of the rest: never the webhook's SUCCESS deliveries, never the table.
import { openTestDatabase } from "@crm/testing";
import { DeliveryRepository } from "../src/persistence/delivery.repository";
import { databaseModes } from "./support/harness";
import { MIGRATIONS_DIR } from "./support/migrations";
import { capturingRepository, genericPlan, seedDeliveredHistory } from "./support/plans";

const usedIndexes = (plan: string) => [...new Set([...plan.matchAll(/"Index Name":"([^"]+)"/g)].map((m) => m[1]!))].sort();
const seqScans = (plan: string) => [...plan.matchAll(/"Node Type":"Seq Scan"[^{}]*"Relation Name":"Delivery"/g)].length;

describe.each(databaseModes)("the recovery statement on %s", (mode) => {
  it("reads the FAILED deliveries of one webhook through their partial index, and the index holds only FAILED rows", async () => {
    const { database: db, close } = await openTestDatabase(mode, { prefix: "webhooks_test", schema: "webhooks", migrationsDir: MIGRATIONS_DIR, poolSize: 1 });
    try {
      const sql = db.sql;
      const { rows: definition } = await sql.query<{ def: string }>(
        `SELECT indexdef AS def FROM pg_indexes WHERE schemaname = 'webhooks' AND indexname = 'Delivery_failed_by_webhook_idx'`,
      );
      expect(definition[0]?.def).toContain(`("webhookId", "createdAt", id) WHERE (status = 'FAILED'::webhooks."DeliveryStatus")`);

      await sql.query("SET plan_cache_mode = force_generic_plan");
      // 4 businesses x 10 webhooks x 200 deliveries over 200 hours, one in ten FAILED.
      await seedDeliveredHistory(sql, "recover-b", 1);
      await sql.exec(`UPDATE webhooks."Delivery" SET status = 'FAILED', attempt = 3 WHERE split_part("eventId", '-', 3)::int % 10 = 0`);
      await sql.exec(`ANALYZE webhooks."Delivery"`);
      const { rows: hooks } = await sql.query<{ id: string; businessId: string }>(`SELECT id::text AS id, "businessId" FROM webhooks."Webhook" ORDER BY id LIMIT 1`);
      const hook = hooks[0]!;

      const { repository: capturing, sent } = capturingRepository([{ recovered: 0, remaining: 0 }]);
      const now = new Date();
      await capturing.requestRecovery(hook.businessId, hook.id, { since: new Date(now.getTime() - 14 * 86_400_000), until: now }, now, 1_000);
      expect(sent.map((s) => s.name)).toEqual(["delivery_request_recovery"]);
      const plan = await genericPlan(sql, sent[0]!);
      expect(seqScans(plan)).toBe(0);
      expect(usedIndexes(plan)).toContain("Delivery_failed_by_webhook_idx");
      expect(usedIndexes(plan)).not.toContain("Delivery_webhookId_createdAt_id_idx");

      // And it does what it says, on the real rows: 20 of that webhook's 200 are FAILED, all within 14 days.
      await sql.query("RESET plan_cache_mode");
      const repository = new DeliveryRepository(undefined as never, sql);
      const recover = () => repository.requestRecovery(hook.businessId, hook.id, { since: new Date(now.getTime() - 14 * 86_400_000), until: now }, now, 15);
      expect(await recover()).toEqual({ recovered: 15, remaining: 5 });
      expect(await recover()).toEqual({ recovered: 5, remaining: 0 });
      expect(await recover()).toEqual({ recovered: 0, remaining: 0 });
      // Another business's view of the same webhook id recovers nothing.
      await sql.exec(`UPDATE webhooks."Delivery" SET status = 'FAILED' WHERE "webhookId" = '${hook.id}'::uuid AND status = 'PENDING'`);
      expect((await repository.requestRecovery("another", hook.id, { since: new Date(now.getTime() - 14 * 86_400_000), until: now }, now, 15)).recovered).toBe(0);
    } finally {
      await close();
    }
  }, 120_000);
});
