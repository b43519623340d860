// Delivery without a foreign key to Webhook (migration 20261126210000_webhook_key_by_trigger): a
// statement-level trigger on Webhook deletes a deleted webhook's deliveries (and the trigger on Delivery
// their attempts), and the creates hold their webhooks FOR KEY SHARE, so no delivery is ever left
// without its webhook, whichever of a create and a webhook's delete commits first. (The product itself
// never deletes a webhook row: DELETE /webhook/{id} deactivates it.)
import { describePostgres } from "@crm/testing";
import type { Client } from "pg";
import { migratedUpTo, withDatabase, insertWebhookRow } from "./support/migrations";
import { withRace, createRaceEvent, waitUntilBlocked } from "./support/races";
import type { DeliveryRepository } from "../src/persistence/delivery.repository";

const hook = "0190f6c4-0000-7000-8000-000000000001";

const orphans = async (client: Client) =>
  (
    await client.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM "webhooks"."Delivery" AS d WHERE NOT EXISTS (SELECT 1 FROM "webhooks"."Webhook" AS w WHERE w.id = d."webhookId")`,
    )
  ).rows[0]!.n;

describePostgres("migration webhook_key_by_trigger", () => {
  it("keeps existing deliveries, drops the key, and a deleted webhook still takes its deliveries and their attempts along", async () => {
    await withDatabase("webhooks_hook_key", async (client) => {
      const migration = await migratedUpTo(client, "_webhook_key_by_trigger");
      await insertWebhookRow(client, hook, "b");
      await client.query(`INSERT INTO "webhooks"."Payload" (id, "eventId", body) VALUES (gen_random_uuid(), 'event-1', '{}')`);
      const { rows } = await client.query<{ id: string }>(
        `INSERT INTO "webhooks"."Delivery" (id, "webhookId", "businessId", "eventId", event, "payloadId", status, attempt, "updatedAt")
         SELECT gen_random_uuid(), $1, 'b', 'event-1', 'client.created', id, 'FAILED', 1, now() FROM "webhooks"."Payload" RETURNING id::text AS id`,
        [hook],
      );
      await client.query(
        `INSERT INTO "webhooks"."DeliveryAttempt" ("deliveryId", attempt, manual, succeeded, "responseStatus", "responseBody", "durationMs") VALUES ($1, 1, false, false, 500, 'no', 7)`,
        [rows[0]!.id],
      );

      await client.query(migration);

      const { rows: keys } = await client.query(`SELECT conname FROM pg_constraint WHERE conrelid = '"webhooks"."Delivery"'::regclass AND contype = 'f'`);
      expect(keys).toEqual([]);
      expect((await client.query(`SELECT 1 FROM "webhooks"."Delivery"`)).rowCount).toBe(1);
      await client.query(`DELETE FROM "webhooks"."Webhook" WHERE id = $1`, [hook]);
      expect((await client.query(`SELECT 1 FROM "webhooks"."Delivery"`)).rowCount).toBe(0);
      expect((await client.query(`SELECT 1 FROM "webhooks"."DeliveryAttempt"`)).rowCount).toBe(0);
    });
  });
});

describePostgres("a create and a delete of its webhook", () => {
  /** The race's create; how many deliveries it created leased (one, or none when the webhook was gone). */
  const create = async (repository: DeliveryRepository) => (await createRaceEvent(repository)).claims.length;

  it("the create commits first: the delete waits for it, then deletes what it created", async () => {
    await withRace("webhooks_hook_race", hook, async ({ writer: creator, deleter, observer, repository }) => {
      await creator.query("BEGIN");
      expect(await create(repository)).toBe(1);
      const deleting = deleter.query(`DELETE FROM "webhooks"."Webhook" WHERE id = $1`, [hook]);
      await waitUntilBlocked(observer, deleter);
      await creator.query("COMMIT");
      expect((await deleting).rowCount).toBe(1);
      expect(await orphans(creator)).toBe(0);
      expect((await creator.query(`SELECT 1 FROM "webhooks"."Delivery"`)).rowCount).toBe(0);
    });
  });

  it("the delete commits first: the create waits for it and creates nothing", async () => {
    await withRace("webhooks_hook_race", hook, async ({ writer: creator, deleter, observer, repository }) => {
      await deleter.query("BEGIN");
      await deleter.query(`DELETE FROM "webhooks"."Webhook" WHERE id = $1`, [hook]);
      const creating = create(repository);
      await waitUntilBlocked(observer, creator);
      await deleter.query("COMMIT");
      expect(await creating).toBe(0);
      expect(await orphans(creator)).toBe(0);
      expect((await creator.query(`SELECT 1 FROM "webhooks"."Delivery"`)).rowCount).toBe(0);
    });
  });
});
