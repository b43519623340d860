import { WEBHOOK_TEST_EVENT } from "@crm/contracts";
import type { RetentionRule } from "@crm/service-kit";
import { Prisma, type PrismaClient } from "../generated/prisma/client";

const DELIVERY = Prisma.raw(`"webhooks"."Delivery"`);
const PAYLOAD = Prisma.raw(`"webhooks"."Payload"`);
const WEBHOOK = Prisma.raw(`"webhooks"."Webhook"`);

/**
 * What webhook-delivery deletes `retentionMs` after it stops being useful. Rows are picked FOR UPDATE
 * SKIP LOCKED, so several instances delete disjoint rows and nobody waits.
 *
 * - Deliveries in a final state (SUCCESS or FAILED) whose last activity (updatedAt: the last attempt,
 *   cancellation or manual retry) is older than the window, with their attempts (deleted by their
 *   key's ON DELETE CASCADE); and test deliveries
 *   (`webhook.test`: PENDING, never due, never attempted, decisions §6) older than the window, whose
 *   state is as final as it gets from the moment they are made (issue 35 item 13). Other PENDING and
 *   RETRYING deliveries are never deleted, however old. A delivery a manual retry or a recovery is
 *   turning back into a due one right now is skipped, or re-checked against its new status.
 * - Payloads (one per event, shared by its deliveries) that no delivery refers to any more. Only those
 *   older than the window: a payload being created for a new event right now is never a candidate.
 *   A re-delivered event's create holds its payload's row lock (skipped here); one that committed after
 *   this statement's snapshot is seen by the trigger on Payload, which fails the batch (23503, as the
 *   foreign key did: migration 20261126203000_payload_key_checked_on_delete) for the next run to redo.
 */
export function deliveryRetentionRules(prisma: PrismaClient, retentionMs: number): RetentionRule[] {
  const cutoff = (now: Date) => new Date(now.getTime() - retentionMs);
  return [
    { name: "deliveries", deleteBatch: (limit, now) => prisma.$executeRaw(retentionStatements.deliveries(limit, cutoff(now))) },
    { name: "payloads", deleteBatch: (limit, now) => prisma.$executeRaw(retentionStatements.payloads(limit, cutoff(now))) },
  ];
}

/** Each rule's delete of at most `limit` rows past `cutoff` (exported for the plan tests). */
export const retentionStatements = {
  // Webhook by webhook through ("webhookId", "createdAt"): ("status", "nextRetryAt") holds only the work
  // owed (migration 20261126220000_status_index_work_owed), and a delivery's createdAt is never after its
  // updatedAt. One index probe per webhook with nothing expired.
  deliveries: (limit: number, cutoff: Date) => Prisma.sql`
    WITH expired AS (
      SELECT e.id FROM ${WEBHOOK} AS w CROSS JOIN LATERAL (
        SELECT id FROM ${DELIVERY}
        WHERE "webhookId" = w.id AND "createdAt" < ${cutoff} AND "updatedAt" < ${cutoff}
          AND (status IN ('SUCCESS', 'FAILED') OR (status = 'PENDING' AND event = ${WEBHOOK_TEST_EVENT} AND "nextRetryAt" IS NULL))
        LIMIT ${limit}
        FOR UPDATE SKIP LOCKED
      ) AS e
      LIMIT ${limit}
    )
    DELETE FROM ${DELIVERY} AS d USING expired WHERE d.id = expired.id`,
  payloads: (limit: number, cutoff: Date) => Prisma.sql`
    WITH orphaned AS (
      SELECT p.id FROM ${PAYLOAD} AS p
      WHERE p."createdAt" < ${cutoff}
        -- A delivery of p: in the primary key's range of p's first 8 bytes, or one of the rows whose ids do
        -- not start with their payload's, in a partial index (migration 20261126223000_delivery_id_from_payload).
        -- Each a probe per payload. As NOT EXISTS (an anti-join) the range's default selectivity made
        -- PGlite hash a scan of the whole table; the partial index's rows, which the planner cannot count,
        -- made PostgreSQL hash one (4,000 deliveries): OFFSET 0 keeps that subquery as it is written.
        AND NOT (EXISTS (SELECT 1 FROM ${DELIVERY} AS d
                         WHERE d.id BETWEEN "webhooks"."payload_delivery_ids_from"(p.id) AND "webhooks"."payload_delivery_ids_to"(p.id) AND d."payloadId" = p.id)
                 OR EXISTS (SELECT 1 FROM ${DELIVERY} AS d
                            WHERE d."payloadId" = p.id AND substring(uuid_send(d.id) FROM 1 FOR 8) <> substring(uuid_send(d."payloadId") FROM 1 FOR 8)
                            OFFSET 0))
      LIMIT ${limit}
      FOR UPDATE OF p SKIP LOCKED
    )
    DELETE FROM ${PAYLOAD} AS p USING orphaned WHERE p.id = orphaned.id`,
};
