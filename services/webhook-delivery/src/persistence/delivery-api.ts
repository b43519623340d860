// What the API reads (a webhook's delivery log, one delivery, its attempts) and asks for (a manual retry,
// a bulk recovery). The invariants it keeps, and the tests that hold it to them:
// - Nothing of another business: every read and request names the business and the webhook
//   (test/route-security.test.ts, test/webhook-api.test.ts).
// - A delivery an attempt holds shows as next retried at its lease's end, when it would be if that
//   attempt's instance died (test/lease.test.ts).
// - A recovery is bounded: the `limit` oldest FAILED deliveries of its window, queued PENDING and manual for
//   their business's room, read through the partial index of FAILED deliveries (test/recover.test.ts,
//   test/recover-index.test.ts, test/recover-fairness.test.ts).
import { isUuid } from "@crm/contracts";
import { newestFirstPage, type Pagination } from "@crm/query-language";
import { Prisma, type Delivery } from "../generated/prisma/client";
import { DELIVERY, DeliveryStore } from "./delivery-store";

/**
 * A delivery as the API shows it: while an attempt holds it, nextRetryAt is when it would be retried
 * if that attempt's instance died, the end of its lease (a claim writes the lease into leaseUntil only).
 */
function shown(row: Delivery): Delivery {
  return row.leaseUntil && (row.nextRetryAt === null || row.leaseUntil > row.nextRetryAt) ? { ...row, nextRetryAt: row.leaseUntil } : row;
}

export class DeliveryApi extends DeliveryStore {
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
