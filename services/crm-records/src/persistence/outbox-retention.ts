import type { RetentionRule } from "@crm/service-kit";
import { Prisma, type PrismaClient } from "./prisma";

const OUTBOX = Prisma.raw(`"records"."OutboxEvent"`);
const HORIZON = Prisma.raw(`"records"."FeedHorizon"`);

/**
 * Outbox rows published more than `retentionMs` ago: the change feed's history ends there
 * (EVENTS_RETENTION_DAYS). Unsent rows (sentAt null), dead-lettered ones included, are never touched.
 * The ("sentAt", sequence) index finds them; ids are picked FOR UPDATE SKIP LOCKED, so several
 * instances delete disjoint rows. In the same statement each business's FeedHorizon moves up to the
 * highest feed position deleted: a cursor below it may have missed an event, and is answered 410000.
 */
export function outboxRetentionRule(prisma: PrismaClient, retentionMs: number): RetentionRule {
  return {
    name: "outbox events",
    deleteBatch: async (limit, now) => {
      const rows = await prisma.$queryRaw<Array<{ deleted: number }>>`
        WITH expired AS (
          SELECT sequence FROM ${OUTBOX}
          WHERE "sentAt" < ${new Date(now.getTime() - retentionMs)}
          LIMIT ${limit}
          FOR UPDATE SKIP LOCKED
        ),
        gone AS (
          DELETE FROM ${OUTBOX} AS o USING expired WHERE o.sequence = expired.sequence RETURNING o."key", o."feedPosition"
        ),
        horizon AS (
          INSERT INTO ${HORIZON} ("businessId", "position")
          SELECT "key", max("feedPosition") FROM gone WHERE "feedPosition" IS NOT NULL GROUP BY "key"
          ON CONFLICT ("businessId") DO UPDATE SET "position" = GREATEST(${HORIZON}."position", EXCLUDED."position")
        )
        SELECT count(*)::int AS deleted FROM gone`;
      return rows[0]?.deleted ?? 0;
    },
  };
}
