// What an attempt's outcome costs PostgreSQL: the outcome statement is planned once per connection
// (not again at every execution), and an attempt's history row is keyed by its delivery and number
// (migration 20261126090000_attempt_keyed_by_delivery), one index entry instead of two.
import { applyMigrations } from "@crm/database";
import { describePostgres } from "@crm/testing";
import { DeliveryRepository } from "../src/persistence/delivery.repository";
import { MIGRATIONS_DIR, migratedUpTo, withDatabase } from "./support/migrations";

describePostgres("the outcome statement", () => {
  it("runs a generic plan after its first executions, even for 2-outcome batches", async () => {
    await withDatabase("webhooks_outcome", async (client) => {
      await applyMigrations({ exec: (text) => client.query(text), query: async (text, params) => ({ rows: (await client.query(text, params)).rows }) }, "webhooks", MIGRATIONS_DIR);
      // The repository's statements on this one connection, so pg_prepared_statements sees them.
      const repository = new DeliveryRepository(undefined as never, {
        exec: (text) => client.query(text),
        query: async (text, params, options) => ({ rows: (await client.query(options?.name ? { name: options.name, text, values: params } : { text, values: params })).rows }),
      });
      const business = "outcome-statement";
      for (let i = 0; i < 2; i++) {
        await client.query(
          `INSERT INTO webhooks."Webhook" (id, "businessId", url, events, secret, "secretPrefix", "updatedAt")
           VALUES (gen_random_uuid(), $1, 'https://example.com/hook', '{client.created}', 'sealed', 'whsec_', now())`,
          [business],
        );
      }
      // Finished deliveries from before, analyzed: a table of some size, where the plan for a batch's
      // real size (index lookups for 2 ids) reads cheaper than the generic plan's guess of 10.
      await client.query(
        `WITH p AS (
           INSERT INTO webhooks."Payload" (id, "eventId", body) SELECT gen_random_uuid(), 'old-' || n, '{}' FROM generate_series(1, 1500) AS n RETURNING id, "eventId"
         )
         INSERT INTO webhooks."Delivery" (id, "webhookId", "businessId", "eventId", event, "payloadId", status, attempt, "updatedAt")
         SELECT gen_random_uuid(), w.id, $1, p."eventId", 'client.created', p.id, 'SUCCESS', 1, now() FROM p, webhooks."Webhook" AS w`,
        [business],
      );
      await client.query(`ANALYZE webhooks."Delivery", webhooks."Webhook"`);
      const now = new Date();
      const events = Array.from({ length: 10 }, (_, i) => ({ eventId: `outcome-statement-${i}`, businessId: business, event: "client.created", payload: "{}" }));
      const { claims } = await repository.createForEvents(events, now, { leaseUntil: new Date(now.getTime() + 60_000), limits: new Map([[business, 20]]) });
      expect(claims).toHaveLength(20);
      for (let i = 0; i < claims.length; i += 2) {
        const batch = claims.slice(i, i + 2).map((claim) => ({
          started: { ...claim, ...claim.read!.send },
          outcome: { responseStatus: 200, responseBody: "ok", durationMs: 1, succeeded: true, status: "SUCCESS" as const, nextRetryAt: null },
          at: now,
        }));
        expect((await repository.recordAttempts(batch)).size).toBe(2);
      }
      const { rows } = await client.query<{ generic: number; custom: number }>(
        `SELECT generic_plans::int AS generic, custom_plans::int AS custom FROM pg_prepared_statements WHERE name = 'delivery_record_attempts'`,
      );
      // PostgreSQL plans the first 5 executions for their values, then keeps the generic plan when it
      // is not dearer. Planned for 2-element arrays, every execution looked cheaper, so each was
      // planned again (0 generic plans of 10 before the parameters were made opaque to the planner).
      expect(rows).toEqual([{ generic: 5, custom: 5 }]);
      const { rows: history } = await client.query<{ n: number }>(`SELECT count(*)::int AS n FROM webhooks."DeliveryAttempt" WHERE attempt = 1`);
      expect(history[0]!.n).toBe(20);
    });
  });
});

describePostgres("migration attempt_keyed_by_delivery", () => {
  it("keys existing attempts by delivery and number, with one index", async () => {
    await withDatabase("webhooks_outcome", async (client) => {
      const migration = await migratedUpTo(client, "_attempt_keyed_by_delivery");
      const hook = "0190f6c4-0000-7000-8000-000000000001";
      const payload = "0190f6c4-0000-7000-8000-000000000002";
      const delivery = "0190f6c4-0000-7000-8000-000000000003";
      await client.query(
        `INSERT INTO "webhooks"."Webhook" (id, "businessId", url, events, secret, "secretPrefix", "updatedAt") VALUES ($1, 'b', 'https://x.test', '{client.created}', 's', 'p', now())`,
        [hook],
      );
      await client.query(`INSERT INTO "webhooks"."Payload" (id, "eventId", body) VALUES ($1, 'event-1', '{}')`, [payload]);
      await client.query(
        `INSERT INTO "webhooks"."Delivery" (id, "webhookId", "businessId", "eventId", event, "payloadId", status, attempt, "updatedAt") VALUES ($1, $2, 'b', 'event-1', 'client.created', $3, 'FAILED', 2, now())`,
        [delivery, hook, payload],
      );
      for (const attempt of [1, 2]) {
        await client.query(
          `INSERT INTO "webhooks"."DeliveryAttempt" (id, "deliveryId", attempt, manual, succeeded, "responseStatus", "responseBody", "durationMs") VALUES (gen_random_uuid(), $1, $2, false, false, 500, $3, 7)`,
          [delivery, attempt, `body ${attempt}`],
        );
      }

      await client.query(migration);

      const { rows: kept } = await client.query(`SELECT * FROM "webhooks"."DeliveryAttempt" ORDER BY attempt`);
      expect(kept.map((r) => [r.deliveryId, r.attempt, r.responseBody])).toEqual([
        [delivery, 1, "body 1"],
        [delivery, 2, "body 2"],
      ]);
      expect(Object.keys(kept[0]!)).not.toContain("id");
      const { rows: indexes } = await client.query<{ name: string; definition: string }>(
        `SELECT indexname AS name, indexdef AS definition FROM pg_indexes WHERE schemaname = 'webhooks' AND tablename = 'DeliveryAttempt'`,
      );
      expect(indexes).toEqual([{ name: "DeliveryAttempt_pkey", definition: expect.stringContaining(`("deliveryId", attempt)`) }]);
      await expect(
        client.query(
          `INSERT INTO "webhooks"."DeliveryAttempt" ("deliveryId", attempt, manual, succeeded, "responseStatus", "responseBody", "durationMs") VALUES ($1, 2, false, false, 500, '', 1)`,
          [delivery],
        ),
      ).rejects.toMatchObject({ code: "23505", constraint: "DeliveryAttempt_pkey" });
      // Still deleted with its delivery.
      await client.query(`DELETE FROM "webhooks"."Delivery" WHERE id = $1`, [delivery]);
      expect((await client.query(`SELECT 1 FROM "webhooks"."DeliveryAttempt"`)).rowCount).toBe(0);
    });
  });
});
