import type { RetentionRule } from "@crm/service-kit";
import { Prisma, type PrismaClient } from "./prisma";

const SESSION = Prisma.raw(`"identity"."Session"`);
const REFRESH_TOKEN = Prisma.raw(`"identity"."RefreshToken"`);

/**
 * Sessions and refresh tokens that can no longer be used, kept `graceMs` past their expiry or
 * revocation (so a late refresh still gets the precise answer, e.g. reuse detection) and then deleted
 * in batches. Ids are picked FOR UPDATE SKIP LOCKED, so several instances delete disjoint rows and
 * a session row a refresh or logout holds right now is simply left for the next run.
 */
export function sessionRetentionRules(prisma: PrismaClient, graceMs: number): RetentionRule[] {
  const cutoff = (now: Date) => new Date(now.getTime() - graceMs);
  return [
    {
      // With their refresh tokens (ON DELETE CASCADE).
      name: "sessions",
      deleteBatch: (limit, now) => prisma.$executeRaw`
        WITH expired AS (
          SELECT id FROM ${SESSION}
          WHERE "expiresAt" < ${cutoff(now)} OR "revokedAt" < ${cutoff(now)}
          LIMIT ${limit}
          FOR UPDATE SKIP LOCKED
        )
        DELETE FROM ${SESSION} AS s USING expired WHERE s.id = expired.id`,
    },
    {
      // Rotated-out tokens of sessions still alive: a token past its own expiry refreshes nothing.
      name: "refresh tokens",
      deleteBatch: (limit, now) => prisma.$executeRaw`
        WITH expired AS (
          SELECT digest FROM ${REFRESH_TOKEN}
          WHERE "expiresAt" < ${cutoff(now)}
          LIMIT ${limit}
          FOR UPDATE SKIP LOCKED
        )
        DELETE FROM ${REFRESH_TOKEN} AS t USING expired WHERE t.digest = expired.digest`,
    },
  ];
}
