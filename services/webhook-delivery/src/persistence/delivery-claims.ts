// Who attempts what, and when: the claims that let any number of instances share the work. A due row
// (PENDING or RETRYING, nextRetryAt <= now, no lease or an expired one) is claimed by writing a lease end
// into its leaseUntil under FOR UPDATE SKIP LOCKED. The invariants it keeps, and the tests that hold it to them:
// - One instance gets a due row, and the lease end it wrote is the fencing token of every later write about
//   that attempt: startAttempt renews it only while it holds, else someone else owns the attempt
//   (test/scheduler-instances.test.ts, test/lease.test.ts).
// - A claim writes leaseUntil alone, in no index (a HOT update), and leaves nextRetryAt as it was; the scans
//   step over rows in flight by their lease (test/lease.test.ts, test/status-index.test.ts).
// - First attempts are claimed through the partial first-attempts index, at most `perBusiness` of one
//   business per claim, so one business's backlog cannot fill a claim (test/first-attempt-claims.test.ts,
//   test/fairness.test.ts, test/takeover.test.ts).
// - The retry cycle's claim leaves recovered deliveries (PENDING and manual) to their business's room
//   (test/recover-fairness.test.ts).
// - A claim given back (shutting down) is due again at once, for any instance (test/takeover.test.ts).
import { isUuid } from "@crm/contracts";
import { Prisma } from "../generated/prisma/client";
import {
  type AttemptToSend,
  type ClaimedDelivery,
  type ClaimRow,
  claimsFrom,
  DELIVERY,
  DeliveryStore,
  FIRST_ATTEMPT,
  free,
  PAYLOAD,
  SEND_COLUMNS,
  type StartedAttempt,
  WEBHOOK,
} from "./delivery-store";

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

export class DeliveryClaims extends DeliveryStore {
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
   * however long its backlog (docs/performance.md D21, D23), not every business's due rows ranked,
   * which the poller, running every 10 ms while a backlog lasts, would read again each time.
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

  /** Gives an unstarted claim back (shutting down): due again at once, for any instance. */
  async releaseClaim(claim: ClaimedDelivery, now: Date): Promise<void> {
    await this.prisma.delivery.updateMany({
      where: { id: claim.id, attempt: claim.attempt, leaseUntil: claim.leaseUntil },
      data: { nextRetryAt: now, leaseUntil: null },
    });
  }
}
