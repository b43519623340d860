// D24 goes for two relations (migrations 20261129010000_webhook_and_attempt_keys and
// 20261129010100_webhook_and_attempt_keys_validated): DeliveryAttempt's key to Delivery and Delivery's key
// to Webhook are back, NOT VALID then validated, on rows written while triggers kept them; their triggers
// are gone and the keys' ON DELETE CASCADE does their work. Payload's trigger stays.
import { readFileSync } from "node:fs";
import path from "node:path";
import { describePostgres } from "@crm/testing";
import { insertWebhookRow, MIGRATIONS_DIR, migratedUpTo, withDatabase } from "./support/migrations";

const hook = "0190f6c4-0000-7000-8000-000000000101";
const payload = "0190f6c4-0000-7000-8000-000000000102";
const delivery = "0190f6c4-0000-7000-8000-000000000103";
const count = async (client: { query: (sql: string) => Promise<{ rowCount: number | null }> }, table: string) =>
  (await client.query(`SELECT 1 FROM "webhooks"."${table}"`)).rowCount;

describePostgres("migrations webhook_and_attempt_keys", () => {
  it("brings the keys back over existing rows, validated, and cascades deletes with them instead of triggers", async () => {
    await withDatabase("webhooks_keys", async (client) => {
      const keys = await migratedUpTo(client, "_webhook_and_attempt_keys");
      await insertWebhookRow(client, hook, "b");
      await client.query(`INSERT INTO "webhooks"."Payload" (id, "eventId", body) VALUES ($1, 'event-1', '{}')`, [payload]);
      await client.query(
        `INSERT INTO "webhooks"."Delivery" (id, "webhookId", "businessId", "eventId", event, "payloadId", status, attempt, "updatedAt")
         VALUES ($1, $2, 'b', 'event-1', 'client.created', $3, 'FAILED', 2, now())`,
        [delivery, hook, payload],
      );
      await client.query(
        `INSERT INTO "webhooks"."DeliveryAttempt" ("deliveryId", attempt, manual, succeeded, "responseStatus", "responseBody", "durationMs")
         SELECT $1, n, false, false, 500, 'no', 7 FROM generate_series(1, 2) AS n`,
        [delivery],
      );

      await client.query(keys);
      await client.query(readFileSync(path.join(MIGRATIONS_DIR, "20261129010100_webhook_and_attempt_keys_validated/migration.sql"), "utf8"));

      const constraints = await client.query(
        `SELECT conname, convalidated, confdeltype FROM pg_constraint WHERE connamespace = 'webhooks'::regnamespace AND contype = 'f' ORDER BY conname`,
      );
      expect(constraints.rows).toEqual([
        { conname: "DeliveryAttempt_deliveryId_fkey", convalidated: true, confdeltype: "c" },
        { conname: "Delivery_webhookId_fkey", convalidated: true, confdeltype: "c" },
      ]);
      const triggers = await client.query(`SELECT t.tgname FROM pg_trigger AS t JOIN pg_class AS c ON c.oid = t.tgrelid
         WHERE NOT t.tgisinternal AND c.relnamespace = 'webhooks'::regnamespace ORDER BY t.tgname`);
      expect(triggers.rows).toEqual([{ tgname: "Payload_keep_referenced" }]);

      // An attempt of no delivery, a delivery of no webhook: refused by the keys.
      const orphan = "0190f6c4-0000-7000-8000-000000000199";
      await expect(
        client.query(
          `INSERT INTO "webhooks"."DeliveryAttempt" ("deliveryId", attempt, manual, succeeded, "responseStatus", "responseBody", "durationMs") VALUES ($1, 1, false, false, 500, 'no', 7)`,
          [orphan],
        ),
      ).rejects.toMatchObject({ code: "23503" });

      // A deleted webhook takes its deliveries along, and they their attempts; the payload stays, kept by its trigger.
      await client.query(`DELETE FROM "webhooks"."Webhook" WHERE id = $1`, [hook]);
      expect(await count(client, "Delivery")).toBe(0);
      expect(await count(client, "DeliveryAttempt")).toBe(0);
      expect(await count(client, "Payload")).toBe(1);
    });
  });
});
