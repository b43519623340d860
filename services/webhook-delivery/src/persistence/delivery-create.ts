// The records of consumed events (and test deliveries): one statement per event or per fetch of events,
// subscribers, payload and records together. The invariants it keeps, and the tests that hold it to them:
// - A delivery of an event is unique per (payload, webhook): its id derives from both (deliveryId), and a
//   re-delivered event finds its payload (unique per event id), so it creates nothing twice
//   (test/delivery-ids.test.ts, test/create-for-events.test.ts, test/consumer-restart.test.ts).
// - A delivery is created only with its payload, inserted or locked in the same statement or transaction:
//   why Payload needs no foreign key (test/payload-restrict.test.ts).
// - Its webhooks are held FOR KEY SHARE until the statement commits: a webhook deleted meanwhile gets no
//   delivery (test/webhook-cascade.test.ts).
// - The first records of each business, up to the caller's room, are created already leased by the caller;
//   the rest are due at once, for whoever has room (test/create-for-events.test.ts, test/takeover.test.ts).
// - A test delivery is never due (nextRetryAt null): no HTTP call is made for it (test/webhook-api.test.ts).
import { uuidv7 } from "@crm/contracts";
import { Prisma, type Delivery } from "../generated/prisma/client";
import { type AttemptToSend, type ClaimedDelivery, type ClaimRow, claimsFrom, DELIVERY, DELIVERY_STATUS, DeliveryStore, PAYLOAD, SEND_COLUMNS, WEBHOOK } from "./delivery-store";

export interface NewEventDeliveries {
  webhookIds: string[];
  businessId: string;
  eventId: string;
  event: string;
  payload: string;
  now: Date;
}

/** One consumed event, for createForEvents. */
export interface NewEvent {
  eventId: string;
  businessId: string;
  event: string;
  /** The delivery body (serializePayload), stored once for all of the event's deliveries. */
  payload: string;
}

/** What createForEvents created and what it left to its caller. */
export interface CreatedForEvents {
  /** The records created already leased by the caller (see `limits`), in event order, each with its event. */
  claims: Array<ClaimedDelivery & { eventId: string }>;
  /** Records created due at once (beyond a business's limit), per business: for whoever has room. */
  due: Map<string, number>;
  /**
   * Active subscribers with a filter: nothing was created for them. The caller decides each against
   * its event (`events[index]`) and creates the matching ones with createForEvent.
   */
  filtered: Array<{ index: number; webhookId: string; filter: string }>;
}

/**
 * Who gets a record of an event: an active webhook `w` of event `e`'s business subscribed to its type
 * (filter or not). The consumer's lookup and createForEvents' statement both ask it.
 */
const subscribes = Prisma.sql`w."businessId" = e."businessId" AND w."isActive" AND e.event = ANY(w.events)`;

/**
 * The id of an event's record for a webhook, from its payload (found again when the event is re-delivered)
 * and the webhook: the payload id's first 8 bytes, then a hash of both (migration
 * 20261126223000_delivery_id_from_payload). The primary key then keeps a delivery unique per payload and
 * webhook, with no index of its own.
 */
const deliveryId = (payloadId: Prisma.Sql, webhookId: Prisma.Sql) => Prisma.sql`"webhooks"."delivery_id"(${payloadId}, ${webhookId})`;

/**
 * A record of this payload for this webhook exists already, whatever its id: in the primary key's range
 * of the payload's 8 bytes, or in the partial index of the rows whose ids do not start with them
 * (created before migration 20261126223000_delivery_id_from_payload). Only for a re-delivered event's
 * records: ON CONFLICT (id) sees those created with a derived id, even by a create not yet committed.
 * Its arguments are qualified columns (the subqueries' own rows are `o`); OFFSET 0 keeps the second
 * subquery a probe of the partial index (PostgreSQL cannot count its rows, and may hash a table scan).
 */
const recordExists = (payloadId: Prisma.Sql, webhookId: Prisma.Sql) => Prisma.sql`(
  EXISTS (SELECT 1 FROM ${DELIVERY} AS o WHERE o.id BETWEEN "webhooks"."payload_delivery_ids_from"(${payloadId}) AND "webhooks"."payload_delivery_ids_to"(${payloadId})
          AND o."payloadId" = ${payloadId} AND o."webhookId" = ${webhookId})
  OR EXISTS (SELECT 1 FROM ${DELIVERY} AS o WHERE o."payloadId" = ${payloadId} AND o."webhookId" = ${webhookId}
          AND substring(uuid_send(o.id) FROM 1 FOR 8) <> substring(uuid_send(o."payloadId") FROM 1 FOR 8) OFFSET 0))`;

export class DeliveryCreates extends DeliveryStore {
  /**
   * One PENDING record per webhook and the event's payload stored once for all of them, in one
   * statement; a re-delivered event finds its payload (unique on the event id), so its records'
   * ids (deliveryId) exist already and it creates nothing. The first `lease.limit` records are created
   * already claimed by the caller (leaseUntil = nextRetryAt = lease.leaseUntil) and returned as claims with what to
   * send: no claim statement follows the insert, and no other instance's poller can take them before
   * the caller sends them (with the event's trace). The others are due at once, for whoever has room.
   */
  async createForEvent(input: NewEventDeliveries, lease: { leaseUntil: Date; limit: number }): Promise<ClaimedDelivery[]> {
    if (input.webhookIds.length === 0) return [];
    const at = input.now.getTime();
    // Due now when not leased: if the immediate attempt is lost in a crash, the retry cycle still sends it.
    const due = input.webhookIds.map((_, i) => (i < lease.limit ? lease.leaseUntil : input.now));
    const claimed = await this.query<ClaimRow>(
      Prisma.sql`
      WITH hooks AS (
        -- The webhooks held (FOR KEY SHARE) until this commits: a deleted one gets nothing, rather than
        -- failing the statement on Delivery's key to Webhook.
        SELECT id FROM ${WEBHOOK} WHERE id = ANY(${input.webhookIds}::uuid[]) FOR KEY SHARE
      ), p AS (
        INSERT INTO ${PAYLOAD} (id, "eventId", body, "createdAt")
        VALUES (${uuidv7(at)}::uuid, ${input.eventId}, ${input.payload}, ${input.now}::timestamptz)
        ON CONFLICT ("eventId") DO UPDATE SET "eventId" = EXCLUDED."eventId"
        RETURNING id, body
      ), d AS (
        INSERT INTO ${DELIVERY} (id, "webhookId", "businessId", "eventId", event, "payloadId", status, attempt, "nextRetryAt", "leaseUntil", "createdAt", "updatedAt")
        SELECT ${deliveryId(Prisma.sql`p.id`, Prisma.sql`v."webhookId"`)}, v."webhookId", ${input.businessId}::text, ${input.eventId}::text, ${input.event}::text, p.id,
               'PENDING'::${DELIVERY_STATUS}, 0, v."nextRetryAt", NULLIF(v."nextRetryAt", ${input.now}::timestamptz), ${input.now}::timestamptz, ${input.now}::timestamptz
        FROM p, unnest(${input.webhookIds}::uuid[], ${due}::timestamptz[]) AS v("webhookId", "nextRetryAt")
        WHERE v."webhookId" IN (SELECT id FROM hooks) AND NOT ${recordExists(Prisma.sql`p.id`, Prisma.sql`v."webhookId"`)}
        ON CONFLICT (id) DO NOTHING
        RETURNING id, "webhookId", "businessId", attempt, event, "manualRetry", "leaseUntil", "updatedAt"
      )
      SELECT d.id::text AS id, d."webhookId"::text AS "webhookId", d."businessId", d.attempt, ${SEND_COLUMNS}
      FROM d JOIN ${WEBHOOK} AS w ON w.id = d."webhookId", p
      WHERE d."leaseUntil" = ${lease.leaseUntil}::timestamptz`,
      "delivery_create_for_event",
    );
    return claimsFrom(claimed, lease.leaseUntil, input.now);
  }

  /**
   * Which of `events` (a business and an event type each) an active webhook of its business is
   * subscribed to, filter or not: their indexes. A small statement (no payloads) the consumer sends
   * before it builds the payloads and createForEvents' statement, for businesses it has not seen
   * subscribers for lately; most businesses have no webhook at all.
   */
  async subscribed(events: ReadonlyArray<{ businessId: string; event: string }>): Promise<Set<number>> {
    if (events.length === 0) return new Set();
    const rows = await this.query<{ index: number }>(
      Prisma.sql`
      SELECT e.n::int - 1 AS index
      FROM unnest(${events.map((e) => e.businessId)}::text[], ${events.map((e) => e.event)}::text[]) WITH ORDINALITY AS e("businessId", event, n)
      WHERE EXISTS (SELECT 1 FROM ${WEBHOOK} AS w WHERE ${subscribes})`,
      "delivery_subscribed",
    );
    return new Set(rows.map((r) => Number(r.index)));
  }

  /**
   * The records of consecutive consumed events in one statement, subscribers included: for every
   * event, one PENDING record per active webhook of its business subscribed to its type and without
   * a filter (webhooks with one are returned in `filtered`, as the filter is ours to evaluate), and its
   * payload stored once, only if some record needs it. Idempotent on the event id as createForEvent.
   * The first `limits.get(businessId)` records of each business (in event order) are created leased
   * by the caller until `leaseUntil` (later than `now`) and returned as claims with what to send; the
   * rest are due at once.
   * Before this, the subscriber lookup was a statement of its own per event (a third of the delivery
   * path's statements, docs/performance.md).
   */
  async createForEvents(events: readonly NewEvent[], now: Date, lease: { leaseUntil: Date; limits: ReadonlyMap<string, number> }): Promise<CreatedForEvents> {
    const created: CreatedForEvents = { claims: [], due: new Map(), filtered: [] };
    // An event the bus delivered twice in one batch is one event (one payload row may be upserted once per statement).
    const indexOf = new Map<string, number>();
    events.forEach((e, i) => indexOf.has(e.eventId) || indexOf.set(e.eventId, i));
    const distinct = [...indexOf.values()].map((i) => events[i]!);
    if (distinct.length === 0) return created;
    const at = now.getTime();
    const column = <T>(pick: (e: NewEvent) => T): T[] => distinct.map(pick);
    /**
     * The records of `fresh`'s events whose payload this statement inserted, or (`redelivered`) of
     * those whose payload it found. A new payload (its id is the one generated here) has no record
     * yet, and none can appear before this statement commits (another transaction upserting the same
     * event waits on that payload row, then finds it), so its records are plain inserts. Only a
     * re-delivered event's may exist already: those go through ON CONFLICT, whose speculative
     * insertion costs a lock and a WAL record more per row.
     */
    const insertRecords = (redelivered: boolean) => Prisma.sql`
        INSERT INTO ${DELIVERY} (id, "webhookId", "businessId", "eventId", event, "payloadId", status, attempt, "nextRetryAt", "leaseUntil", "createdAt", "updatedAt")
        SELECT ${deliveryId(Prisma.sql`"payloadId"`, Prisma.sql`"webhookId"`)}, "webhookId", "businessId", "eventId", event, "payloadId", 'PENDING'::${DELIVERY_STATUS}, 0,
               CASE WHEN leased THEN ${lease.leaseUntil}::timestamptz ELSE ${now}::timestamptz END,
               CASE WHEN leased THEN ${lease.leaseUntil}::timestamptz END, ${now}::timestamptz, ${now}::timestamptz
        FROM fresh WHERE ${redelivered ? Prisma.sql`NOT "newPayload" AND NOT ${recordExists(Prisma.sql`fresh."payloadId"`, Prisma.sql`fresh."webhookId"`)} ON CONFLICT (id) DO NOTHING` : Prisma.sql`"newPayload"`}
        RETURNING id, "webhookId", "businessId", "eventId", attempt, event, "manualRetry", "leaseUntil", "updatedAt", "payloadId"`;
    const rows = await this.query<
      {
        kind: "claim" | "due" | "filter";
        id: string;
        webhookId: string;
        businessId: string;
        eventId: string;
        attempt: number;
        index: number;
        filter: string;
        count: number;
      } & AttemptToSend
    >(
      Prisma.sql`
      WITH ev AS (
        SELECT * FROM unnest(${column((e) => e.eventId)}::text[], ${column((e) => e.event)}::text[], ${column((e) => e.businessId)}::text[],
                             ${column(() => uuidv7(at))}::uuid[], ${column((e) => e.payload)}::text[])
          WITH ORDINALITY AS e("eventId", event, "businessId", "payloadId", body, n)
      ), subs AS (
        -- FOR KEY SHARE until this commits: a webhook deleted meanwhile gets nothing, rather than failing
        -- the statement on Delivery's key to Webhook.
        SELECT e.n, w.id AS "webhookId", w.filter
        FROM ev AS e JOIN ${WEBHOOK} AS w ON ${subscribes}
        FOR KEY SHARE OF w
      ), p AS (
        INSERT INTO ${PAYLOAD} (id, "eventId", body, "createdAt")
        SELECT e."payloadId", e."eventId", e.body, ${now}::timestamptz FROM ev AS e
        WHERE EXISTS (SELECT 1 FROM subs AS s WHERE s.n = e.n AND s.filter IS NULL)
        ON CONFLICT ("eventId") DO UPDATE SET "eventId" = EXCLUDED."eventId"
        RETURNING id, "eventId", body
      ), fresh AS (
        SELECT s."webhookId", e."businessId", e."eventId", e.event, p.id AS "payloadId", p.id = e."payloadId" AS "newPayload",
               row_number() OVER (PARTITION BY e."businessId" ORDER BY s.n, s."webhookId") <= COALESCE(l."limit", 0) AS leased
        FROM subs AS s JOIN ev AS e ON e.n = s.n JOIN p ON p."eventId" = e."eventId"
          LEFT JOIN unnest(${[...lease.limits.keys()]}::text[], ${[...lease.limits.values()]}::int[]) AS l("businessId", "limit") ON l."businessId" = e."businessId"
        WHERE s.filter IS NULL
      ), created AS (${insertRecords(false)}
      ), redelivered AS (${insertRecords(true)}
      ), d AS (
        SELECT * FROM created UNION ALL SELECT * FROM redelivered
      )
      SELECT 'claim' AS kind, d.id::text AS id, d."webhookId"::text AS "webhookId", d."businessId", d."eventId", d.attempt,
             NULL::int AS index, NULL::text AS filter, NULL::int AS count, ${SEND_COLUMNS}
      FROM d JOIN ${WEBHOOK} AS w ON w.id = d."webhookId" JOIN p ON p.id = d."payloadId"
      WHERE d."leaseUntil" IS NOT NULL
      UNION ALL
      SELECT 'due', NULL, NULL, d."businessId", NULL, NULL, NULL, NULL, count(*)::int, NULL, NULL, NULL, NULL, NULL, NULL, NULL
      FROM d WHERE d."leaseUntil" IS NULL GROUP BY d."businessId"
      UNION ALL
      SELECT 'filter', NULL, s."webhookId"::text, NULL, NULL, NULL, s.n::int - 1, s.filter, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL
      FROM subs AS s WHERE s.filter IS NOT NULL`,
      "delivery_create_for_events",
    );
    for (const row of rows) {
      if (row.kind === "due") created.due.set(row.businessId, row.count);
      else if (row.kind === "filter") created.filtered.push({ index: indexOf.get(distinct[row.index]!.eventId)!, webhookId: row.webhookId, filter: row.filter });
      else {
        const { kind, id, webhookId, businessId, eventId, attempt, index, filter, count, ...send } = row;
        created.claims.push({ id, webhookId, businessId, eventId, attempt: Number(attempt), leaseUntil: lease.leaseUntil, read: { at: now, send } });
      }
    }
    created.claims.sort((a, b) => indexOf.get(a.eventId)! - indexOf.get(b.eventId)!);
    created.filtered.sort((a, b) => a.index - b.index);
    return created;
  }

  /** A test delivery: PENDING, never due (nextRetryAt null), so no HTTP call is ever made. */
  async createTest(input: { webhookId: string; businessId: string; event: string; payload: string; now: Date }): Promise<Delivery> {
    const { now, payload, ...fields } = input;
    const payloadId = uuidv7(now.getTime());
    // Its payload's first 8 bytes and a random tail, as every delivery's id starts with its payload's
    // (migration 20261126223000_delivery_id_from_payload): payload retention finds it by that range.
    const id = payloadId.slice(0, 19) + uuidv7(now.getTime()).slice(19);
    return this.prisma.$transaction(async (tx) => {
      // Its webhook held (FOR KEY SHARE) until this commits: a webhook deleted meanwhile gets no delivery.
      const held = await tx.$queryRaw<unknown[]>`SELECT 1 FROM ${WEBHOOK} WHERE id = ${fields.webhookId}::uuid FOR KEY SHARE`;
      if (held.length === 0) throw new Error(`webhook ${fields.webhookId} no longer exists`);
      await tx.payload.create({ data: { id: payloadId, eventId: null, body: payload, createdAt: now } });
      return tx.delivery.create({
        data: { id, ...fields, eventId: null, payloadId, status: "PENDING", attempt: 0, nextRetryAt: null, createdAt: now, updatedAt: now },
      });
    });
  }
}
