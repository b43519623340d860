// DeliveryAttempt without a foreign key (migration 20261126200000_attempts_without_foreign_key): a
// statement-level trigger on Delivery deletes a deleted delivery's attempts, and no attempt is ever
// left without its delivery, whichever of an outcome and a delete of the same delivery commits first.
// Retention's own test (retention.test.ts, both modes) checks the attempts go with their deliveries.
import { describePostgres } from "@crm/testing";
import type { Client } from "pg";
import type { ClaimedDelivery, DeliveryRepository } from "../src/persistence/delivery.repository";
import { insertWebhookRow, migratedUpTo, withDatabase } from "./support/migrations";
import { withRace, createRaceEvent, waitUntilBlocked, type Race } from "./support/races";

const hook = "0190f6c4-0000-7000-8000-000000000001";
const payload = "0190f6c4-0000-7000-8000-000000000002";
const delivery = "0190f6c4-0000-7000-8000-000000000003";

const orphans = async (client: Client) =>
  (
    await client.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM "webhooks"."DeliveryAttempt" AS a WHERE NOT EXISTS (SELECT 1 FROM "webhooks"."Delivery" AS d WHERE d.id = a."deliveryId")`,
    )
  ).rows[0]!.n;

describePostgres("migration attempts_without_foreign_key", () => {
  it("keeps existing attempts, drops the key, and still deletes attempts with their delivery or webhook", async () => {
    await withDatabase("webhooks_attempts", async (client) => {
      const migration = await migratedUpTo(client, "_attempts_without_foreign_key");
      await insertWebhookRow(client, hook, "b");
      await client.query(`INSERT INTO "webhooks"."Payload" (id, "eventId", body) VALUES ($1, 'event-1', '{}')`, [payload]);
      const insertDelivery = (id: string, eventId: string) =>
        client.query(
          `INSERT INTO "webhooks"."Delivery" (id, "webhookId", "businessId", "eventId", event, "payloadId", status, attempt, "updatedAt")
           VALUES ($1, $2, 'b', $3, 'client.created', $4, 'FAILED', 2, now())`,
          [id, hook, eventId, payload],
        );
      const insertAttempts = (id: string) =>
        client.query(
          `INSERT INTO "webhooks"."DeliveryAttempt" ("deliveryId", attempt, manual, succeeded, "responseStatus", "responseBody", "durationMs")
           SELECT $1, n, false, false, 500, 'no', 7 FROM generate_series(1, 2) AS n`,
          [id],
        );
      await insertDelivery(delivery, "event-1");
      await insertAttempts(delivery);

      await client.query(migration);

      const { rows: keys } = await client.query(`SELECT conname FROM pg_constraint WHERE conrelid = '"webhooks"."DeliveryAttempt"'::regclass AND contype = 'f'`);
      expect(keys).toEqual([]);
      expect((await client.query(`SELECT 1 FROM "webhooks"."DeliveryAttempt" WHERE "deliveryId" = $1`, [delivery])).rowCount).toBe(2);

      // A delivery deleted by any statement takes its attempts along (as ON DELETE CASCADE did).
      await client.query(`DELETE FROM "webhooks"."Delivery" WHERE id = $1`, [delivery]);
      expect((await client.query(`SELECT 1 FROM "webhooks"."DeliveryAttempt"`)).rowCount).toBe(0);

      // A deleted webhook: its deliveries by Delivery's key to it, their attempts by the trigger.
      const second = "0190f6c4-0000-7000-8000-000000000004";
      await client.query(`INSERT INTO "webhooks"."Payload" (id, "eventId", body) VALUES (gen_random_uuid(), 'event-2', '{}')`);
      await client.query(
        `INSERT INTO "webhooks"."Delivery" (id, "webhookId", "businessId", "eventId", event, "payloadId", status, attempt, "updatedAt")
         SELECT $1, $2, 'b', 'event-2', 'client.created', id, 'FAILED', 2, now() FROM "webhooks"."Payload" WHERE "eventId" = 'event-2'`,
        [second, hook],
      );
      await insertAttempts(second);
      await client.query(`DELETE FROM "webhooks"."Webhook" WHERE id = $1`, [hook]);
      expect((await client.query(`SELECT 1 FROM "webhooks"."Delivery"`)).rowCount).toBe(0);
      expect(await orphans(client)).toBe(0);
      expect((await client.query(`SELECT 1 FROM "webhooks"."DeliveryAttempt"`)).rowCount).toBe(0);
    });
  });
});

describePostgres("an outcome and a delete of the same delivery", () => {
  /** A race whose delivery was created leased: its claim. */
  const withClaimedRace = (work: (race: Race & { claim: ClaimedDelivery }) => Promise<void>) =>
    withRace("webhooks_attempt_race", hook, async (race) => {
      const { claims } = await createRaceEvent(race.repository);
      expect(claims).toHaveLength(1);
      await work({ ...race, claim: claims[0]! });
    });

  const record = (repository: DeliveryRepository, claim: ClaimedDelivery) =>
    repository.recordAttempts([
      {
        started: { ...claim, ...claim.read!.send },
        outcome: { responseStatus: 200, responseBody: "ok", durationMs: 1, succeeded: true, status: "SUCCESS", nextRetryAt: null },
        at: new Date(),
      },
    ]);

  it("the outcome commits first: the delete waits for it, then deletes the attempt it recorded", async () => {
    await withClaimedRace(async ({ writer: outcome, deleter, observer, repository, claim }) => {
      await outcome.query("BEGIN");
      expect((await record(repository, claim)).has(claim.id)).toBe(true);
      const deleting = deleter.query(`DELETE FROM "webhooks"."Delivery" WHERE id = $1`, [claim.id]);
      await waitUntilBlocked(observer, deleter);
      await outcome.query("COMMIT");
      expect((await deleting).rowCount).toBe(1);
      // The trigger's DELETE saw the attempt committed after the delete statement began.
      expect(await orphans(outcome)).toBe(0);
      expect((await outcome.query(`SELECT 1 FROM "webhooks"."DeliveryAttempt"`)).rowCount).toBe(0);
    });
  });

  it("the delete commits first: the outcome waits for it, records nothing and inserts no attempt", async () => {
    await withClaimedRace(async ({ writer: outcome, deleter, observer, repository, claim }) => {
      await deleter.query("BEGIN");
      await deleter.query(`DELETE FROM "webhooks"."Delivery" WHERE id = $1`, [claim.id]);
      const recording = record(repository, claim);
      await waitUntilBlocked(observer, outcome);
      await deleter.query("COMMIT");
      expect((await recording).size).toBe(0);
      expect((await outcome.query(`SELECT 1 FROM "webhooks"."DeliveryAttempt"`)).rowCount).toBe(0);
    });
  });
});
