// Delivery's indexes, as migrations left them:
// - 20261126143000_unique_per_payload: a delivery is unique per (payload, webhook), one index instead
//   of the (webhookId, eventId) unique index and the payloadId index, so every create and every
//   outcome writes one index entry fewer. The guarantee and the payload lookups must stay.
import { describePostgres } from "@crm/testing";
import { migratedUpTo, withDatabase } from "./support/migrations";

const hook = "0190f6c4-0000-7000-8000-000000000001";
const otherHook = "0190f6c4-0000-7000-8000-000000000002";
const payload = "0190f6c4-0000-7000-8000-000000000003";

describePostgres("migration unique_per_payload", () => {
  it("keeps existing deliveries, rejects a second one per payload and webhook, and still finds deliveries by payload", async () => {
    await withDatabase("webhooks_indexes", async (client) => {
      const migration = await migratedUpTo(client, "_unique_per_payload");
      for (const id of [hook, otherHook]) {
        await client.query(
          `INSERT INTO "webhooks"."Webhook" (id, "businessId", url, events, secret, "secretPrefix", "updatedAt") VALUES ($1, 'b', 'https://x.test', '{client.created}', 's', 'p', now())`,
          [id],
        );
      }
      await client.query(`INSERT INTO "webhooks"."Payload" (id, "eventId", body) VALUES ($1, 'event-1', '{}')`, [payload]);
      const insert = (webhookId: string) =>
        client.query(
          `INSERT INTO "webhooks"."Delivery" (id, "webhookId", "businessId", "eventId", event, "payloadId", "updatedAt") VALUES (gen_random_uuid(), $1, 'b', 'event-1', 'client.created', $2, now())`,
          [webhookId, payload],
        );
      await insert(hook);
      await insert(otherHook);

      await client.query(migration);

      expect((await client.query(`SELECT 1 FROM "webhooks"."Delivery"`)).rowCount).toBe(2);
      const { rows: indexes } = await client.query<{ name: string }>(
        `SELECT indexname AS name FROM pg_indexes WHERE schemaname = 'webhooks' AND tablename = 'Delivery' ORDER BY indexname`,
      );
      expect(indexes.map((i) => i.name)).toEqual([
        "Delivery_first_attempts_by_business_idx",
        "Delivery_payloadId_webhookId_key",
        "Delivery_pkey",
        "Delivery_status_nextRetryAt_idx",
        "Delivery_webhookId_createdAt_id_idx",
      ]);
      await expect(insert(hook)).rejects.toMatchObject({ code: "23505", constraint: "Delivery_payloadId_webhookId_key" });
      // Payload retention's probe (and the foreign key's check when a payload goes) read the new index.
      await client.query(`SET enable_seqscan = off`);
      const { rows: plan } = await client.query<{ "QUERY PLAN": string }>(`EXPLAIN SELECT 1 FROM "webhooks"."Delivery" AS d WHERE d."payloadId" = '${payload}'`);
      expect(plan.map((r) => r["QUERY PLAN"]).join("\n")).toContain("Delivery_payloadId_webhookId_key");
    });
  });
});
