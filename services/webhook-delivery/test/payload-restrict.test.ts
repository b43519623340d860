// Delivery without a foreign key to Payload (migration 20261126203000_payload_key_checked_on_delete): a
// statement-level trigger on Payload refuses to delete a payload a delivery refers to (SQLSTATE 23503,
// as the key's ON DELETE RESTRICT), also when the delivery was committed after the deleting statement's
// snapshot. Retention's own test (retention.test.ts, both modes) checks which payloads go.
import { describePostgres } from "@crm/testing";
import { migratedUpTo, withDatabase, insertWebhookRow } from "./support/migrations";
import { withRace, createRaceEvent, waitUntilBlocked } from "./support/races";

const hook = "0190f6c4-0000-7000-8000-000000000001";
const payload = "0190f6c4-0000-7000-8000-000000000002";

describePostgres("migration payload_key_checked_on_delete", () => {
  it("keeps existing rows, drops the key, and still refuses to delete a payload a delivery refers to", async () => {
    await withDatabase("webhooks_payload_key", async (client) => {
      const migration = await migratedUpTo(client, "_payload_key_checked_on_delete");
      await insertWebhookRow(client, hook, "b");
      await client.query(`INSERT INTO "webhooks"."Payload" (id, "eventId", body) VALUES ($1, 'event-1', '{}'), (gen_random_uuid(), 'event-2', '{}')`, [payload]);
      await client.query(
        `INSERT INTO "webhooks"."Delivery" (id, "webhookId", "businessId", "eventId", event, "payloadId", "updatedAt") VALUES (gen_random_uuid(), $1, 'b', 'event-1', 'client.created', $2, now())`,
        [hook, payload],
      );

      await client.query(migration);

      const { rows: keys } = await client.query(`SELECT conname FROM pg_constraint WHERE conrelid = '"webhooks"."Delivery"'::regclass AND conname = 'Delivery_payloadId_fkey'`);
      expect(keys).toEqual([]);
      await expect(client.query(`DELETE FROM "webhooks"."Payload" WHERE id = $1`, [payload])).rejects.toMatchObject({ code: "23503" });
      // Unreferenced payloads go, also beside a referenced one's refusal in another statement.
      expect((await client.query(`DELETE FROM "webhooks"."Payload" WHERE "eventId" = 'event-2'`)).rowCount).toBe(1);
      expect((await client.query(`SELECT 1 FROM "webhooks"."Payload" WHERE id = $1`, [payload])).rowCount).toBe(1);
    });
  });
});

describePostgres("a re-delivered event's create and a delete of its payload", () => {
  it("the create commits after the delete's snapshot: the delete fails, no delivery is left without its payload", async () => {
    await withRace("webhooks_payload_race", hook, async ({ writer: creator, deleter, observer, repository }) => {
      // The event's payload, old and no longer referenced (its deliveries are gone): retention's candidate.
      await creator.query(`INSERT INTO "webhooks"."Payload" (id, "eventId", body, "createdAt") VALUES ($1, 'race-1', '{}', now() - interval '40 days')`, [payload]);

      // The event is delivered again: its create finds the payload (and holds its row lock) until commit.
      await creator.query("BEGIN");
      const created = await createRaceEvent(repository);
      expect(created.claims).toHaveLength(1);
      // Retention's check, in a statement whose snapshot predates the create's commit: it waits for the lock.
      const deleting = deleter.query(`DELETE FROM "webhooks"."Payload" AS p WHERE p.id = $1 AND NOT EXISTS (SELECT 1 FROM "webhooks"."Delivery" AS d WHERE d."payloadId" = p.id)`, [
        payload,
      ]);
      await waitUntilBlocked(observer, deleter);
      await creator.query("COMMIT");
      // Its NOT EXISTS (old snapshot) passed; the trigger's query (new snapshot) sees the delivery.
      await expect(deleting).rejects.toMatchObject({ code: "23503" });
      const { rows } = await creator.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM "webhooks"."Delivery" AS d WHERE NOT EXISTS (SELECT 1 FROM "webhooks"."Payload" AS p WHERE p.id = d."payloadId")`,
      );
      expect(rows[0]!.n).toBe(0);
    });
  });
});
