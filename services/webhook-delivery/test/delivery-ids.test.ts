// A delivery of an event has an id derived from its payload and webhook (migration
// 20261126223000_delivery_id_from_payload): the payload id's first 8 bytes, then a hash of both. The
// primary key keeps a delivery unique per payload and webhook, with no index of its own; "the deliveries
// of a payload" (payload retention, the trigger on Payload) are the primary key's range of that payload's
// 8 bytes, plus a partial index of the rows whose ids do not start with them (created before the
// migration, or by hand). Every lookup reads an index in its generic plan.
import type { SqlRunner } from "@crm/database";
import { openTestDatabase } from "@crm/testing";
import { retentionStatements } from "../src/persistence/delivery-retention";
import { databaseModes } from "./support/harness";
import { DeliveryRepository } from "../src/persistence/delivery.repository";
import { MIGRATIONS_DIR } from "./support/migrations";
import { type CapturedStatement, capturingRepository, genericPlan } from "./support/plans";

const BUSINESS = "ids-b";

type Statement = CapturedStatement;

/** The text and values of the creates, captured without running them. */
async function createStatements(webhookIds: string[]): Promise<Statement[]> {
  const { repository, sent } = capturingRepository();
  const now = new Date();
  const leaseUntil = new Date(now.getTime() + 60_000);
  await repository.createForEvents([{ eventId: "old-1", businessId: BUSINESS, event: "client.created", payload: "{}" }], now, { leaseUntil, limits: new Map([[BUSINESS, 2]]) });
  await repository.createForEvent({ webhookIds, businessId: BUSINESS, eventId: "old-2", event: "client.created", payload: "{}", now }, { leaseUntil, limit: 2 });
  return sent;
}

const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe.each(databaseModes)("delivery ids from their payload on %s", (mode) => {
  it("creates nothing twice for a re-delivered event, whatever its records' ids, and keeps referenced payloads", async () => {
    const { database: db, close } = await openTestDatabase(mode, { prefix: "webhooks_test", schema: "webhooks", migrationsDir: MIGRATIONS_DIR, poolSize: 1 });
    try {
      const sql: SqlRunner = db.sql;
      const repository = new DeliveryRepository(undefined as never, sql);
      const { rows: hooks } = await sql.query<{ id: string }>(`
        INSERT INTO webhooks."Webhook" (id, "businessId", url, events, secret, "secretPrefix", "updatedAt")
        SELECT gen_random_uuid(), '${BUSINESS}', 'https://example.com/hook', '{client.created}', 's', 'p', now() FROM generate_series(1, 3)
        RETURNING id::text AS id`);
      const { rows: indexes } = await sql.query<{ name: string }>(
        `SELECT indexname AS name FROM pg_indexes WHERE schemaname = 'webhooks' AND tablename = 'Delivery' ORDER BY indexname`,
      );
      expect(indexes.map((i) => i.name)).toEqual([
        // Only FAILED rows (migration 20261128120000_failed_by_webhook_concurrently): a create writes no entry there.
        "Delivery_failed_by_webhook_idx",
        "Delivery_first_attempts_by_business_idx",
        "Delivery_payloadId_other_ids_idx",
        "Delivery_pkey",
        "Delivery_status_nextRetryAt_idx",
        "Delivery_webhookId_createdAt_id_idx",
      ]);

      const create = (eventId: string) => {
        const now = new Date();
        return repository.createForEvents([{ eventId, businessId: BUSINESS, event: "client.created", payload: "{}" }], now, {
          leaseUntil: new Date(now.getTime() + 60_000),
          limits: new Map([[BUSINESS, 2]]),
        });
      };
      const deliveries = async (eventId: string) =>
        (
          await sql.query<{ id: string; payloadId: string; webhookId: string }>(
            `SELECT id::text AS id, "payloadId"::text AS "payloadId", "webhookId"::text AS "webhookId" FROM webhooks."Delivery" WHERE "eventId" = $1 ORDER BY "webhookId"`,
            [eventId],
          )
        ).rows;

      // A new event: ids that start with the payload's 8 bytes, UUID v7s of its time.
      const first = await create("event-1");
      expect(first.claims).toHaveLength(2);
      expect(first.due).toEqual(new Map([[BUSINESS, 1]]));
      const created = await deliveries("event-1");
      expect(created).toHaveLength(3);
      for (const d of created) expect({ v7: UUID_V7.test(d.id), prefix: d.id.slice(0, 19) }).toEqual({ v7: true, prefix: d.payloadId.slice(0, 19) });
      // Re-delivered: the same ids, nothing created.
      expect(await create("event-1")).toEqual({ claims: [], due: new Map(), filtered: [] });
      expect(await deliveries("event-1")).toEqual(created);
      // Through createForEvent (a filtered webhook's path) too.
      const again = await repository.createForEvent(
        { webhookIds: hooks.map((h) => h.id), businessId: BUSINESS, eventId: "event-1", event: "client.created", payload: "{}", now: new Date() },
        { leaseUntil: new Date(Date.now() + 60_000), limit: 3 },
      );
      expect(again).toEqual([]);
      expect(await deliveries("event-1")).toEqual(created);

      // An event whose records have ids that do not start with its payload's (created before the
      // migration, or by hand): one webhook has its record, the re-delivery creates the other two only.
      const { rows: payloads } = await sql.query<{ id: string }>(
        `INSERT INTO webhooks."Payload" (id, "eventId", body, "createdAt") VALUES (gen_random_uuid(), 'event-2', '{}', now() - interval '40 days') RETURNING id::text AS id`,
      );
      const byHand = "0190f6c4-0000-7000-8000-000000000001";
      await sql.query(
        `INSERT INTO webhooks."Delivery" (id, "webhookId", "businessId", "eventId", event, "payloadId", status, "createdAt", "updatedAt")
         VALUES ($1, $2, '${BUSINESS}', 'event-2', 'client.created', $3, 'SUCCESS', now() - interval '40 days', now() - interval '40 days')`,
        [byHand, hooks[0]!.id, payloads[0]!.id],
      );
      await create("event-2");
      const second = await deliveries("event-2");
      expect(second.map((d) => d.webhookId)).toEqual(hooks.map((h) => h.id).sort());
      expect(second.filter((d) => d.id !== byHand).every((d) => d.id.slice(0, 19) === payloads[0]!.id.slice(0, 19))).toBe(true);
      await create("event-2");
      expect(await deliveries("event-2")).toEqual(second);

      // A payload referred to by either kind of id is kept, by retention and by the trigger on Payload.
      const cutoff = new Date(Date.now() - 30 * 86_400_000);
      await sql.query(`UPDATE webhooks."Payload" SET "createdAt" = now() - interval '40 days'`);
      const payloadRetention = retentionStatements.payloads(1_000, cutoff);
      await sql.query(payloadRetention.text, payloadRetention.values);
      expect((await sql.query(`SELECT 1 FROM webhooks."Payload"`)).rows).toHaveLength(2);
      await expect(sql.query(`DELETE FROM webhooks."Payload" WHERE "eventId" = 'event-1'`)).rejects.toMatchObject({ code: "23503" });
      await sql.query(`DELETE FROM webhooks."Delivery" WHERE "eventId" = 'event-2' AND id <> $1`, [byHand]);
      await expect(sql.query(`DELETE FROM webhooks."Payload" WHERE "eventId" = 'event-2'`)).rejects.toMatchObject({ code: "23503" });
      // Once no delivery refers to them, they go.
      await sql.query(`DELETE FROM webhooks."Delivery"`);
      await sql.query(payloadRetention.text, payloadRetention.values);
      expect((await sql.query(`SELECT 1 FROM webhooks."Payload"`)).rows).toHaveLength(0);
    } finally {
      await close();
    }
  }, 120_000);

  it("reads a payload's deliveries by index in the creates' and payload retention's generic plans", async () => {
    const { database: db, close } = await openTestDatabase(mode, { prefix: "webhooks_test", schema: "webhooks", migrationsDir: MIGRATIONS_DIR, poolSize: 1 });
    try {
      const sql: SqlRunner = db.sql;
      await sql.query("SET plan_cache_mode = force_generic_plan");
      // 10 webhooks x 400 events delivered, and rows whose ids do not start with their payload's.
      const { rows: hooks } = await sql.query<{ id: string }>(`
        INSERT INTO webhooks."Webhook" (id, "businessId", url, events, secret, "secretPrefix", "updatedAt")
        SELECT gen_random_uuid(), '${BUSINESS}', 'https://example.com/hook', '{client.created}', 's', 'p', now() FROM generate_series(1, 10)
        RETURNING id::text AS id`);
      await sql.exec(`
        INSERT INTO webhooks."Payload" (id, "eventId", body, "createdAt") SELECT gen_random_uuid(), 'old-' || e, '{}', now() - interval '40 days' FROM generate_series(1, 400) AS e;
        INSERT INTO webhooks."Delivery" (id, "webhookId", "businessId", "eventId", event, "payloadId", status, attempt, "createdAt", "updatedAt")
        SELECT CASE WHEN p."eventId" LIKE '%0' THEN gen_random_uuid() ELSE webhooks.delivery_id(p.id, w.id) END, w.id, w."businessId", p."eventId",
               'client.created', p.id, 'SUCCESS', 1, now(), now()
        FROM webhooks."Webhook" AS w, webhooks."Payload" AS p;
        ANALYZE webhooks."Delivery";`);
      const statements = [
        ...(await createStatements(hooks.map((h) => h.id))),
        { name: "retention: payloads", ...fromPrisma(retentionStatements.payloads(1_000, new Date(Date.now() - 30 * 86_400_000))) },
      ];
      const seqScans: Record<string, number> = {};
      for (const statement of statements)
        seqScans[statement.name] = [...(await genericPlan(sql, statement)).matchAll(/"Node Type":"Seq Scan"[^{}]*"Relation Name":"Delivery"/g)].length;
      expect(seqScans).toEqual({ delivery_create_for_events: 0, delivery_create_for_event: 0, "retention: payloads": 0 });
    } finally {
      await close();
    }
  }, 120_000);
});

const fromPrisma = (statement: { text: string; values: unknown[] }) => ({ text: statement.text, params: statement.values });
