// What an attempt did: its outcome, its history row and its webhook's health, in one statement for the
// attempts that finish together. The invariants it keeps, and the tests that hold it to them:
// - An outcome is written only while the attempt's lease holds (id, attempt and leaseUntil as claimed);
//   one whose lease was lost is not recorded (test/lease.test.ts, test/scheduler-instances.test.ts).
// - A DeliveryAttempt row is inserted only from the outcome's update of its delivery, which holds that
//   delivery locked, so its key to Delivery never fails an outcome.
// - The webhook's health moves in the same statement, once per webhook per batch; reaching
//   autoDisableAfter deactivates it, and a retry that would wait on an inactive webhook ends FAILED
//   (test/endpoint-health.test.ts).
// - The statement is prepared once per connection and planned once (opaque parameters), whatever the batch
//   holds (test/outcome-statement.test.ts, test/outcome-values.test.ts).
import { WEBHOOK_DISABLED_CONSECUTIVE_FAILURES } from "@crm/contracts";
import { Prisma } from "../generated/prisma/client";
import { dateArray, plainArray, textArray } from "./array-literal";
import { type AttemptRecord, DELIVERY, DELIVERY_ATTEMPT, DELIVERY_STATUS, DeliveryStore, type StartedAttempt, WEBHOOK } from "./delivery-store";

/**
 * A parameter as the planner sees it in a generic plan: `(SELECT $n::type)` is an InitPlan, evaluated
 * once per execution, whose value the planner never looks at (the outer cast, a no-op, makes
 * `= ANY(opaque(...))` an array's ANY, not a subquery's). A prepared statement whose parameters are
 * all opaque costs the same whatever they hold, so after its first 5 executions (custom plans)
 * PostgreSQL settles on the generic plan and plans it no more on that connection. Otherwise it
 * compares: a 2-outcome recordAttempts, planned for its 2-element arrays, looked cheaper than the
 * generic plan's 10-row guesses, so it was planned again at every execution (docs/performance.md
 * D18). Use it only where the statement reads the value once
 * (unnest, an index condition), not in a per-row expression.
 */
const opaque = (value: unknown, type: string) => Prisma.sql`(SELECT ${value}::${Prisma.raw(type)})::${Prisma.raw(type)}`;

export class DeliveryOutcomes extends DeliveryStore {
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
        -- what keeps the attempt's key to its delivery from ever failing the statement: never insert
        -- attempts from anywhere else.
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

  /** The webhook was deactivated before this attempt: nothing is sent and nothing more will be. */
  async cancel(started: StartedAttempt, reason: string, at: Date): Promise<void> {
    await this.prisma.delivery.updateMany({
      where: { id: started.id, attempt: started.attempt, leaseUntil: started.leaseUntil },
      data: { status: "FAILED", responseStatus: 0, responseBody: reason, nextRetryAt: null, leaseUntil: null, updatedAt: at },
    });
  }
}
