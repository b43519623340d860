// Retention by age for crm-records' own tables keyed by (business, digest): the rows whose timestamp is
// older than the table keeps them, deleted in batches found by that timestamp's index and locked with
// SKIP LOCKED, so that instances running the same rule at once delete disjoint rows.
import type { RetentionRule } from "@crm/service-kit";
import { Prisma, type PrismaClient } from "./prisma";

export interface AgeRetention {
  /** The rule's name in the retention job's logs and metrics. */
  name: string;
  /** The table, schema-qualified and quoted. */
  table: string;
  /** The column that, with "businessId", is the table's primary key. */
  digestColumn: string;
  /** The indexed timestamp a row's age is read from. */
  timestampColumn: string;
  retentionMs: number;
}

export function ageRetentionRule(prisma: PrismaClient, rule: AgeRetention): RetentionRule {
  const table = Prisma.raw(rule.table);
  const digest = Prisma.raw(`"${rule.digestColumn}"`);
  const timestamp = Prisma.raw(`"${rule.timestampColumn}"`);
  return {
    name: rule.name,
    deleteBatch: (limit, now) =>
      prisma.$executeRaw`
        WITH expired AS (
          SELECT "businessId", ${digest} FROM ${table}
          WHERE ${timestamp} < ${new Date(now.getTime() - rule.retentionMs)}
          LIMIT ${limit}
          FOR UPDATE SKIP LOCKED
        )
        DELETE FROM ${table} AS t USING expired WHERE t."businessId" = expired."businessId" AND t.${digest} = expired.${digest}`,
  };
}
