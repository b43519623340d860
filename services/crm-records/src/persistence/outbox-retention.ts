import type { RetentionRule } from "@crm/service-kit";
import { Prisma, type PrismaClient } from "./prisma";

const OUTBOX = Prisma.raw(`"records"."OutboxEvent"`);

/**
 * Outbox rows published more than `retentionMs` ago (the full event payloads have no use once every
 * consumer has them; a late duplicate is what consumers de-duplicate on the event id anyway). Unsent
 * rows (sentAt null), dead-lettered ones included, are never touched. The ("sentAt", sequence) index finds them; ids are picked FOR
 * UPDATE SKIP LOCKED, so several instances delete disjoint rows.
 */
export function outboxRetentionRule(prisma: PrismaClient, retentionMs: number): RetentionRule {
  return {
    name: "outbox events",
    deleteBatch: (limit, now) => prisma.$executeRaw`
      WITH expired AS (
        SELECT sequence FROM ${OUTBOX}
        WHERE "sentAt" < ${new Date(now.getTime() - retentionMs)}
        LIMIT ${limit}
        FOR UPDATE SKIP LOCKED
      )
      DELETE FROM ${OUTBOX} AS o USING expired WHERE o.sequence = expired.sequence`,
  };
}
