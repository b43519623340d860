import { isUuid, uuidv7, WEBHOOK_DISABLED_CONSECUTIVE_FAILURES } from "@crm/contracts";
import type { SqlRunner } from "@crm/database";
import { newestFirstPage, type Pagination } from "@crm/query-language";
import { dateArray, plainArray, textArray } from "./array-literal";
import { Prisma, type Delivery, type DeliveryStatus, type PrismaClient } from "../generated/prisma/client";

/**
 * A delivery this process may attempt. `leaseUntil` is the value this process wrote into the row's
 * `leaseUntil` when it claimed it: while it is still there, nobody else has claimed the attempt, so
 * it doubles as the fencing token for every later write about this attempt.
 */
export interface ClaimedDelivery {
  id: string;
  webhookId: string;
  businessId: string;
  attempt: number;
  leaseUntil: Date;
  /**
   * What to send, as read by the claim statement itself, and when: an attempt that starts soon after
   * its claim sends this instead of reading it again (see AttemptExecutor).
   */
  read?: { at: Date; send: AttemptToSend };
}

/** What an attempt sends, read from the delivery, its webhook (current URL and secret) and its payload. */
export interface AttemptToSend {
  event: string;
  payload: string;
  manualRetry: boolean;
  url: string;
  /** The webhook's signing secret as stored: sealed (see SecretKeyring), opened only to sign. */
  secret: string;
  /** The secret rotated away most recently, sealed, while its grace period runs (else null). */
  previousSecret: string | null;
  webhookActive: boolean;
}

/** What an attempt needs, read at send time (the webhook's current URL and secret). */
export interface StartedAttempt extends ClaimedDelivery, AttemptToSend {}

export interface AttemptRecord {
  responseStatus: number;
  responseBody: string;
  durationMs: number;
  succeeded: boolean;
  status: DeliveryStatus;
  nextRetryAt: Date | null;
}

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

// Raw SQL names: the models live in the "webhooks" PostgreSQL schema.
const DELIVERY = Prisma.raw(`"webhooks"."Delivery"`);
const WEBHOOK = Prisma.raw(`"webhooks"."Webhook"`);
const PAYLOAD = Prisma.raw(`"webhooks"."Payload"`);
const DELIVERY_ATTEMPT = Prisma.raw(`"webhooks"."DeliveryAttempt"`);
const DELIVERY_STATUS = Prisma.raw(`"webhooks"."DeliveryStatus"`);
/**
 * The AttemptToSend columns, for statements over the delivery `d`, its webhook `w` and payload `p`:
 * one list for the claims and startAttempt, so both always read the same thing.
 */
const SEND_COLUMNS = Prisma.sql`d.event, p.body AS payload, d."manualRetry", w.url, w.secret,
  CASE WHEN w."previousSecretExpiresAt" > now() THEN w."previousSecret" END AS "previousSecret",
  -- Waiting (last touched) before the webhook last became inactive: never sent, even if it is active
  -- again now (extensions §E1.3); a manual retry or a recovery since then has touched it.
  w."isActive" AND (w."deactivatedAt" IS NULL OR d."updatedAt" > w."deactivatedAt") AS "webhookActive"`;
type ClaimRow = { id: string; webhookId: string; businessId: string; attempt: number } & AttemptToSend;

function claimsFrom(rows: ClaimRow[], leaseUntil: Date, at: Date): ClaimedDelivery[] {
  return rows.map(({ id, webhookId, businessId, attempt, ...send }) => ({
    id,
    webhookId,
    businessId,
    attempt: Number(attempt),
    leaseUntil,
    read: { at, send },
  }));
}

/**
 * Due and held by nobody: a claimed row keeps its (past) nextRetryAt, and its lease is in leaseUntil.
 * For the claims' WHERE clauses, over the delivery rows unqualified or as `d`.
 */
const free = (now: Date, d = "") =>
  Prisma.sql`${Prisma.raw(d)}"nextRetryAt" <= ${now}::timestamptz AND (${Prisma.raw(d)}"leaseUntil" IS NULL OR ${Prisma.raw(d)}"leaseUntil" <= ${now}::timestamptz)`;

/**
 * A first attempt (PENDING), written as the first-attempts index's predicate (migration
 * 20261126170000_first_attempts_index_only): ("status", "nextRetryAt") cannot take IS NOT DISTINCT FROM
 * as an index condition, so that partial index is the only one that serves the claims of first attempts,
 * whatever the last ANALYZE saw. With `status = 'PENDING'`, their generic plans read every business's due
 * first attempts through ("status", "nextRetryAt") and sorted them whenever ANALYZE had seen no PENDING
 * row (docs/performance.md, thirteenth round). status is NOT NULL: the same rows as `=`.
 */
const FIRST_ATTEMPT = Prisma.sql`status IS NOT DISTINCT FROM 'PENDING'`;

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

/**
 * A parameter as the planner sees it in a generic plan: `(SELECT $n::type)` is an InitPlan, evaluated
 * once per execution, whose value the planner never looks at (the outer cast, a no-op, makes
 * `= ANY(opaque(...))` an array's ANY, not a subquery's). A prepared statement whose parameters are
 * all opaque costs the same whatever they hold, so after its first 5 executions (custom plans)
 * PostgreSQL settles on the generic plan and plans it no more on that connection. Otherwise it
 * compares: a 2-outcome recordAttempts, planned for its 2-element arrays, looked cheaper than the
 * generic plan's 10-row guesses, so it was planned again at every execution (bench:delivery:sql:
 * 0 generic plans of 1,500; 567 µs of PostgreSQL CPU per delivery for outcomes, 200-350 with
 * `plan_cache_mode = force_generic_plan`). Use it only where the statement reads the value once
 * (unnest, an index condition), not in a per-row expression.
 */
const opaque = (value: unknown, type: string) => Prisma.sql`(SELECT ${value}::${Prisma.raw(type)})::${Prisma.raw(type)}`;

/**
 * The second half of every claim: lease the rows the statement's `due` CTE picked (leaseUntil, in no
 * index, so the row is updated in place: a HOT update, no index entry written) and read what sending
 * them needs, in the same statement.
 */
function leaseDueAndRead(leaseUntil: Date): Prisma.Sql {
  return Prisma.sql`
      UPDATE ${DELIVERY} AS d SET "leaseUntil" = ${leaseUntil}::timestamptz
      FROM due, ${WEBHOOK} AS w, ${PAYLOAD} AS p
      WHERE d.id = due.id AND w.id = d."webhookId" AND p.id = d."payloadId"
      RETURNING d.id::text AS id, d."webhookId"::text AS "webhookId", d."businessId", d.attempt, ${SEND_COLUMNS}`;
}

/**
 * A delivery as the API shows it: while an attempt holds it, nextRetryAt is when it would be retried
 * if that attempt's instance died, the end of its lease (a claim writes the lease into leaseUntil only).
 */
function shown(row: Delivery): Delivery {
  return row.leaseUntil && (row.nextRetryAt === null || row.leaseUntil > row.nextRetryAt) ? { ...row, nextRetryAt: row.leaseUntil } : row;
}

/**
 * Delivery records and the claim protocol that lets any number of instances share the work:
 * a due row (status PENDING or RETRYING, nextRetryAt <= now, no lease or an expired one) is claimed
 * by setting its leaseUntil to a lease end under FOR UPDATE SKIP LOCKED, so exactly one instance
 * gets it; every later write about that attempt requires leaseUntil to still hold that lease end.
 * Records created leased also get nextRetryAt = the lease end (no claim scan meets them before it);
 * a claim leaves nextRetryAt alone, so the claim scans step over rows in flight (filtered by
 * leaseUntil), in exchange for claims that write no index entry.
 */
export class DeliveryRepository {
  /**
   * `sql` is the database driver under `prisma`: the statements of every attempt (create, claims,
   * start, outcomes) go straight to it, built with Prisma.sql (bound parameters, `$n` text), because
   * Prisma's client runtime cost 11.6% of the delivery CPU profile (docs/performance.md) for
   * statements it only passes through. The rest (API reads and writes) stays on Prisma.
   */
  constructor(
    private readonly prisma: PrismaClient,
    private readonly sql: SqlRunner,
  ) {}

  /**
   * `name`: the statement's text is the same on every call (lists travel as array parameters, never
   * as a variable number of placeholders), so each connection prepares it once and PostgreSQL
   * neither parses nor, after a few runs, plans it again (planning alone was 0.4-0.5 ms of a 2-row
   * recordAttempts, docs/performance.md).
   */
  private async query<T>(statement: Prisma.Sql, name?: string): Promise<T[]> {
    return (await this.sql.query<T>(statement.text, statement.values, name ? { name } : undefined)).rows;
  }

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
        -- The webhooks held (FOR KEY SHARE) until this commits: a deleted one gets nothing (migration
        -- 20261126210000_webhook_key_by_trigger).
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
        -- FOR KEY SHARE: what Delivery's key to Webhook took, once per webhook instead of a check per
        -- record; a webhook deleted meanwhile gets nothing (migration 20261126210000_webhook_key_by_trigger).
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
      // Its webhook held (FOR KEY SHARE) until this commits, as Delivery's key to Webhook did: a webhook
      // deleted meanwhile gets no delivery (migration 20261126210000_webhook_key_by_trigger).
      const held = await tx.$queryRaw<unknown[]>`SELECT 1 FROM ${WEBHOOK} WHERE id = ${fields.webhookId}::uuid FOR KEY SHARE`;
      if (held.length === 0) throw new Error(`webhook ${fields.webhookId} no longer exists`);
      await tx.payload.create({ data: { id: payloadId, eventId: null, body: payload, createdAt: now } });
      return tx.delivery.create({
        data: { id, ...fields, eventId: null, payloadId, status: "PENDING", attempt: 0, nextRetryAt: null, createdAt: now, updatedAt: now },
      });
    });
  }

  list(webhookId: string, page: Pagination): Promise<{ rows: Delivery[]; total: number }> {
    return newestFirstPage(
      page,
      async (window) => (await this.prisma.delivery.findMany({ where: { webhookId }, ...window })).map(shown),
      () => this.prisma.delivery.count({ where: { webhookId } }),
    );
  }

  async find(businessId: string, webhookId: string, id: string): Promise<Delivery | undefined> {
    if (!isUuid(id)) return undefined;
    const row = await this.prisma.delivery.findFirst({ where: { id, webhookId, businessId } });
    return row ? shown(row) : undefined;
  }

  /** Retries due now that no attempt holds (the `crm_webhook_retries_due` gauge): what claims would find. */
  async countRetriesDue(now: Date): Promise<number> {
    const [row] = await this.query<{ due: number }>(
      Prisma.sql`SELECT count(*)::int AS due FROM ${DELIVERY} WHERE status = 'RETRYING' AND ${free(now)}`,
      "delivery_count_retries_due",
    );
    return row?.due ?? 0;
  }

  /**
   * Claims up to `limit` due deliveries, oldest due first (optionally only among `ids`). Rows another
   * instance is claiming right now are skipped, not waited for.
   */
  async claimDue(options: {
    now: Date;
    leaseUntil: Date;
    limit: number;
    ids?: readonly string[];
    /** Only first attempts (PENDING) of this business: its backlog, claimed as slots free up. */
    firstAttemptsOf?: string;
  }): Promise<ClaimedDelivery[]> {
    const ids = options.ids?.filter(isUuid);
    if (options.limit < 1 || ids?.length === 0) return [];
    // Three fixed texts, one per kind of claim, each a prepared statement of its own.
    const [which, name] = ids
      ? [Prisma.sql`status IN ('PENDING', 'RETRYING') AND id = ANY(${ids}::uuid[])`, "delivery_claim_ids"]
      : options.firstAttemptsOf === undefined
        ? // Not recovered deliveries (PENDING and manual): their business's room decides when they go (requestRecovery).
          [Prisma.sql`status IN ('PENDING', 'RETRYING') AND (status = 'RETRYING' OR NOT "manualRetry")`, "delivery_claim_due"]
        : [Prisma.sql`${FIRST_ATTEMPT} AND "businessId" = ${options.firstAttemptsOf}`, "delivery_claim_first_of"];
    const rows = await this.query<ClaimRow>(
      Prisma.sql`
      WITH due AS (
        SELECT id FROM ${DELIVERY}
        WHERE ${which} AND ${free(options.now)}
        ORDER BY "nextRetryAt", id
        LIMIT ${options.limit}::int
        FOR UPDATE SKIP LOCKED
      )
      ${leaseDueAndRead(options.leaseUntil)}`,
      name,
    );
    return claimsFrom(rows, options.leaseUntil, options.now);
  }

  /**
   * Claims due first attempts (PENDING) of any business, oldest first but at most `perBusiness` per
   * business, so one business's backlog cannot fill a claim, and at most its `room` for a business in
   * `held` (the caller's own bound minus what it already holds of that business; 0 leaves it out).
   * This is how any instance takes over first attempts the instance that created them had no room for.
   *
   * Served by the partial index of first attempts by business (migration
   * 20261125180000_first_attempts_by_business): `business` steps from one business with a due first
   * attempt to the next (one index probe each, a loose index scan), and each business's oldest
   * `perBusiness` are read in index order; so a poll reads at most `perBusiness` rows per business,
   * however long its backlog. Until the seventh round it ranked every business's due rows
   * (row_number() over all of them, read through ("status", "nextRetryAt")): 750 rows for a claim of
   * 13 in bench:delivery, where the poller runs every 10 ms while a backlog lasts.
   */
  async claimFirstAttempts(options: { now: Date; leaseUntil: Date; limit: number; perBusiness: number; held: ReadonlyMap<string, number> }): Promise<ClaimedDelivery[]> {
    if (options.limit < 1 || options.perBusiness < 1) return [];
    const perBusiness = Prisma.sql`${options.perBusiness}::int`;
    const firstDue = Prisma.sql`${FIRST_ATTEMPT} AND "nextRetryAt" <= ${options.now}::timestamptz`;
    const rows = await this.query<ClaimRow>(
      Prisma.sql`
      WITH RECURSIVE business AS (
        (SELECT "businessId" FROM ${DELIVERY} WHERE ${firstDue} ORDER BY "businessId" LIMIT 1)
        UNION ALL
        SELECT (SELECT n."businessId" FROM ${DELIVERY} AS n WHERE ${firstDue} AND n."businessId" > b."businessId" ORDER BY n."businessId" LIMIT 1)
        FROM business AS b WHERE b."businessId" IS NOT NULL
      ), ranked AS (
        SELECT f.id, f."nextRetryAt"
        FROM business AS b
        LEFT JOIN unnest(${[...options.held.keys()]}::text[], ${[...options.held.values()]}::int[]) AS h("businessId", room) ON h."businessId" = b."businessId"
        CROSS JOIN LATERAL (
          SELECT id, "nextRetryAt" FROM ${DELIVERY}
          WHERE ${firstDue} AND ${free(options.now)} AND "businessId" = b."businessId"
          ORDER BY "nextRetryAt", id
          LIMIT LEAST(${perBusiness}, COALESCE(h.room, ${perBusiness}))
        ) AS f
        WHERE b."businessId" IS NOT NULL
      ), due AS (
        SELECT d.id FROM ${DELIVERY} AS d
        -- The chosen rows by primary key, rechecked once locked. status::text keeps ("status", "nextRetryAt")
        -- out of this plan: with d.status = 'PENDING' (or as IN (SELECT ...)) it read every due row through
        -- that index to lock a few (3,000 to lock 40 in bench:delivery:sql).
        WHERE d.id = ANY(ARRAY(SELECT id FROM ranked ORDER BY "nextRetryAt", id LIMIT ${options.limit}::int))
          AND d.status::text = 'PENDING' AND ${free(options.now, "d.")}
        FOR UPDATE SKIP LOCKED
      )
      ${leaseDueAndRead(options.leaseUntil)}`,
      "delivery_claim_first_attempts",
    );
    return claimsFrom(rows, options.leaseUntil, options.now);
  }

  /**
   * Renews the lease when the attempt really starts (it may have waited for a concurrency slot) and
   * reads what to send. Null when the lease was lost: someone else owns this attempt now.
   */
  async startAttempt(claim: ClaimedDelivery, leaseUntil: Date): Promise<StartedAttempt | null> {
    const rows = await this.query<AttemptToSend>(
      Prisma.sql`
      UPDATE ${DELIVERY} AS d SET "leaseUntil" = ${leaseUntil}::timestamptz
      FROM ${WEBHOOK} AS w, ${PAYLOAD} AS p
      WHERE d.id = ${claim.id}::uuid AND d.attempt = ${claim.attempt}::int AND d."leaseUntil" = ${claim.leaseUntil}::timestamptz
        AND d.status IN ('PENDING', 'RETRYING') AND w.id = d."webhookId" AND p.id = d."payloadId"
      RETURNING ${SEND_COLUMNS}`,
      "delivery_start_attempt",
    );
    const row = rows[0];
    return row ? { ...claim, ...row, leaseUntil, read: undefined } : null;
  }

  /**
   * Stores the outcome of an attempt and its history row; false when the lease was lost meanwhile.
   * One statement (the history row is inserted from the UPDATE's RETURNING), so it is atomic without
   * a transaction: one round trip instead of four (BEGIN, UPDATE, INSERT, COMMIT).
   */
  async recordAttempt(started: StartedAttempt, outcome: AttemptRecord, at: Date): Promise<boolean> {
    return (await this.recordAttempts([{ started, outcome, at }])).has(started.id);
  }

  /**
   * Stores the outcomes of several attempts in one statement (each row fenced by its own lease, as
   * in recordAttempt); returns the ids of the deliveries recorded, the others' leases were lost.
   * Every row is its own claim, so one delivery appears at most once.
   */
  async recordAttempts(items: ReadonlyArray<{ started: StartedAttempt; outcome: AttemptRecord; at: Date }>): Promise<Set<string>> {
    if (items.length === 0) return new Set();
    // One array per column: the same statement text for any number of outcomes, each sent as its
    // array literal (array-literal.ts: no per-element preparation by the driver).
    // Each array behind opaque(): PostgreSQL plans the statement once per connection (see opaque).
    type Item = (typeof items)[number];
    const plain = (pick: (item: Item) => string | number | boolean, type: string) => opaque(plainArray(items.map(pick)), type);
    const dates = (pick: (item: Item) => Date | null) => opaque(dateArray(items.map(pick)), "timestamptz[]");
    const input = Prisma.sql`unnest(
      ${plain((i) => i.started.id, "uuid[]")}, ${plain((i) => i.started.attempt, "int[]")}, ${dates((i) => i.started.leaseUntil)},
      ${plain((i) => i.outcome.status, "text[]")}, ${plain((i) => i.outcome.responseStatus, "int[]")}, ${opaque(textArray(items.map((i) => i.outcome.responseBody)), "text[]")},
      ${dates((i) => i.outcome.nextRetryAt)}, ${dates((i) => i.at)},
      ${plain((i) => i.started.manualRetry, "boolean[]")}, ${plain((i) => i.outcome.succeeded, "boolean[]")}, ${plain((i) => i.outcome.durationMs, "int[]")},
      ${plain((i) => i.started.webhookId, "uuid[]")})`;
    // The webhooks' health (extensions §E1.3) moves in the same statement, from the attempts whose
    // lease still holds, once per webhook however many of its attempts the batch has: the failures
    // after its last success in the batch are added (or, after a success, are the count); reaching
    // autoDisableAfter on an active webhook deactivates it. Then a failure that would wait for a retry
    // of an inactive webhook (just disabled, or by its owner meanwhile) ends FAILED instead.
    const count = Prisma.sql`(CASE WHEN h."lastSuccess" IS NULL THEN w."consecutiveFailures" + h."failuresAfter" ELSE h."failuresAfter" END)`;
    const disables = Prisma.sql`(w."isActive" AND w."autoDisableAfter" IS NOT NULL AND h."failuresAfter" > 0 AND ${count} >= w."autoDisableAfter")`;
    const hookActive = Prisma.sql`COALESCE((SELECT "isActive" FROM hook WHERE hook.id = i."webhookId"), true)`;
    // The records are looked up by primary key (`d.id = ANY(ids)`), not through the join with `input`
    // alone: its row count is unknown to the (generic) plan, which then hash-joined a sequential scan of
    // the whole table, twice (fenced and recorded): 5,760 rows per statement by the end of a
    // bench:delivery run, and growing with the table. The ids are the input's own, aggregated once (an
    // InitPlan: as opaque to the planner as a parameter), not sent and parsed twice more.
    const ids = Prisma.sql`(SELECT array_agg(id) FROM input)::uuid[]`;
    const rows = await this.query<{ id: string }>(
      Prisma.sql`
      WITH input AS (
        SELECT * FROM ${input} AS i(id, attempt, "leaseUntil", status, "responseStatus", "responseBody", "nextRetryAt", at, manual, succeeded, "durationMs", "webhookId")
      ), fenced AS (
        SELECT i.* FROM input AS i JOIN ${DELIVERY} AS d ON d.id = i.id AND d.attempt = i.attempt AND d."leaseUntil" = i."leaseUntil"
        WHERE d.id = ANY(${ids})
      ), succeeded AS (
        SELECT "webhookId", max(at) AS "lastSuccess" FROM fenced WHERE succeeded GROUP BY "webhookId"
      ), health AS (
        SELECT f."webhookId", s."lastSuccess", max(f.at) FILTER (WHERE NOT f.succeeded) AS "lastFailure",
               (count(*) FILTER (WHERE NOT f.succeeded AND (s."lastSuccess" IS NULL OR f.at > s."lastSuccess")))::int AS "failuresAfter"
        FROM fenced AS f LEFT JOIN succeeded AS s USING ("webhookId")
        GROUP BY f."webhookId", s."lastSuccess"
      ), hook AS (
        UPDATE ${WEBHOOK} AS w SET
          "consecutiveFailures" = ${count},
          "lastSuccessAt" = GREATEST(w."lastSuccessAt", h."lastSuccess"),
          "lastFailureAt" = GREATEST(w."lastFailureAt", h."lastFailure"),
          "isActive" = w."isActive" AND NOT ${disables},
          "disabledReason" = CASE WHEN ${disables} THEN ${WEBHOOK_DISABLED_CONSECUTIVE_FAILURES} ELSE w."disabledReason" END,
          "deactivatedAt" = CASE WHEN ${disables} THEN h."lastFailure" ELSE w."deactivatedAt" END
        FROM health AS h
        WHERE w.id = h."webhookId"
        RETURNING w.id, w."isActive"
      ), recorded AS (
        UPDATE ${DELIVERY} AS d
        SET attempt = i.attempt + 1,
            status = CASE WHEN i.status = 'RETRYING' AND NOT ${hookActive} THEN 'FAILED'::${DELIVERY_STATUS} ELSE i.status::${DELIVERY_STATUS} END,
            "responseStatus" = i."responseStatus", "responseBody" = i."responseBody",
            "nextRetryAt" = CASE WHEN ${hookActive} THEN i."nextRetryAt" END, "leaseUntil" = NULL, "updatedAt" = i.at
        FROM input AS i
        WHERE d.id = i.id AND d.attempt = i.attempt AND d."leaseUntil" = i."leaseUntil" AND d.id = ANY(${ids})
        RETURNING i.*
      ), history AS (
        -- Only from \`recorded\`: an attempt of a delivery this statement updated and holds locked. That is
        -- what keeps DeliveryAttempt without orphans now that it has no foreign key (migration
        -- 20261126200000_attempts_without_foreign_key): never insert attempts from anywhere else.
        INSERT INTO ${DELIVERY_ATTEMPT} ("deliveryId", attempt, manual, succeeded, "responseStatus", "responseBody", "durationMs", "createdAt")
        SELECT id, attempt + 1, manual, succeeded, "responseStatus", "responseBody", "durationMs", at
        FROM recorded
        RETURNING "deliveryId"
      )
      -- The outcomes not recorded (their lease was lost): almost always none, so no row to send back.
      SELECT id::text AS id FROM input WHERE id NOT IN (SELECT "deliveryId" FROM history)`,
      "delivery_record_attempts",
    );
    const lost = new Set(rows.map((row) => row.id));
    return new Set(items.map((i) => i.started.id).filter((id) => !lost.has(id)));
  }

  /** Gives an unstarted claim back (shutting down): due again at once, for any instance. */
  async releaseClaim(claim: ClaimedDelivery, now: Date): Promise<void> {
    await this.prisma.delivery.updateMany({
      where: { id: claim.id, attempt: claim.attempt, leaseUntil: claim.leaseUntil },
      data: { nextRetryAt: now, leaseUntil: null },
    });
  }

  /** The webhook was deactivated before this attempt: nothing is sent and nothing more will be. */
  async cancel(started: StartedAttempt, reason: string, at: Date): Promise<void> {
    await this.prisma.delivery.updateMany({
      where: { id: started.id, attempt: started.attempt, leaseUntil: started.leaseUntil },
      data: { status: "FAILED", responseStatus: 0, responseBody: reason, nextRetryAt: null, leaseUntil: null, updatedAt: at },
    });
  }

  /**
   * Turns a FAILED delivery back into a due one, marked manual (its failure schedules nothing).
   * "not-found" covers other businesses' deliveries and ids that are not ids.
   */
  async requestManualRetry(businessId: string, webhookId: string, id: string, now: Date): Promise<"accepted" | "not-found" | "not-failed"> {
    if (!isUuid(id)) return "not-found";
    const { count } = await this.prisma.delivery.updateMany({
      where: { id, webhookId, businessId, status: "FAILED" },
      data: { status: "RETRYING", manualRetry: true, nextRetryAt: now, updatedAt: now },
    });
    if (count > 0) return "accepted";
    return (await this.find(businessId, webhookId, id)) ? "not-failed" : "not-found";
  }

  /**
   * Bulk manual retry (extensions §E1.2), bounded (issue 35 item 8): the `limit` oldest FAILED deliveries
   * of this webhook (and business: never another tenant's) created in [since, until) are queued for one
   * manual attempt now, in one statement; how many FAILED ones of the window it left is `remaining`.
   * Queued as PENDING, like first attempts, so they are claimed as first attempts are: by each
   * instance's poller within the business's room (claimFirstAttempts), never by the retry cycle (see
   * claimDue), which knows no business. Both reads walk the partial index of FAILED deliveries by
   * webhook (migration 20261128120000_failed_by_webhook_concurrently): `limit` rows and the window's FAILED entries,
   * however many deliveries the webhook has. The count is of the webhook alone: the caller found it
   * in the business.
   */
  async requestRecovery(businessId: string, webhookId: string, window: { since: Date; until: Date }, now: Date, limit: number): Promise<{ recovered: number; remaining: number }> {
    if (!isUuid(webhookId)) return { recovered: 0, remaining: 0 };
    const inWindow = Prisma.sql`"webhookId" = ${webhookId}::uuid AND status = 'FAILED' AND "createdAt" >= ${window.since}::timestamptz AND "createdAt" < ${window.until}::timestamptz`;
    const [row] = await this.query<{ recovered: number; remaining: number }>(
      Prisma.sql`
      WITH picked AS (
        SELECT id FROM ${DELIVERY}
        WHERE ${inWindow} AND "businessId" = ${businessId}
        ORDER BY "createdAt", id
        LIMIT ${limit}::int
        FOR UPDATE SKIP LOCKED
      ), queued AS (
        UPDATE ${DELIVERY} AS d SET status = 'PENDING', "manualRetry" = true, "nextRetryAt" = ${now}::timestamptz, "updatedAt" = ${now}::timestamptz
        FROM picked WHERE d.id = picked.id
        RETURNING d.id
      )
      -- Both counts see the rows as they were before this statement: the window's FAILED ones include those queued.
      SELECT (SELECT count(*) FROM queued)::int AS recovered,
             ((SELECT count(*) FROM ${DELIVERY} WHERE ${inWindow}) - (SELECT count(*) FROM queued))::int AS remaining`,
      "delivery_request_recovery",
    );
    return { recovered: row?.recovered ?? 0, remaining: Math.max(0, row?.remaining ?? 0) };
  }

  attempts(deliveryId: string) {
    return this.prisma.deliveryAttempt.findMany({ where: { deliveryId }, orderBy: { attempt: "asc" } });
  }
}
