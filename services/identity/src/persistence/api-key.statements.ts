// The API-key statements Prisma's query API cannot say (a conditional LEAST, a batch from unnest);
// what they mean and when they run is ApiKeyService's.
import type { ApiKey, PrismaClient } from "./prisma";

type Db = Pick<PrismaClient, "$queryRaw" | "$executeRaw">;

/**
 * Moves an active key's expiry to `endsBy` unless it ends sooner already (LEAST, so a concurrent
 * roll's sooner end stands). Conditional on the key still being active at `now`: undefined when it is not.
 */
export async function shortenActiveKeyExpiry(db: Db, id: string, endsBy: Date, now: Date): Promise<ApiKey | undefined> {
  const rows = await db.$queryRaw<ApiKey[]>`
    UPDATE "identity"."ApiKey" SET "expiresAt" = LEAST(COALESCE("expiresAt", ${endsBy}), ${endsBy})
    WHERE "id" = ${id}::uuid AND "revokedAt" IS NULL AND ("expiresAt" IS NULL OR "expiresAt" > ${now})
    RETURNING *`;
  return rows[0];
}

/**
 * One statement for a batch of uses: lastUsedAt never moves back, and never past the database's now;
 * lastUsedIp moves with it (kept when the report has none).
 */
export async function recordLastUse(db: Db, latest: ReadonlyMap<string, { at: Date; ip?: string }>): Promise<void> {
  const ids = [...latest.keys()];
  const times = ids.map((id) => latest.get(id)!.at.toISOString());
  const ips = ids.map((id) => latest.get(id)!.ip ?? null);
  await db.$executeRaw`
    UPDATE "identity"."ApiKey" AS k SET "lastUsedAt" = LEAST(u."at", now()), "lastUsedIp" = COALESCE(u."ip", k."lastUsedIp")
    FROM unnest(${ids}::uuid[], ${times}::timestamptz[], ${ips}::text[]) AS u("id", "at", "ip")
    WHERE k."id" = u."id" AND (k."lastUsedAt" IS NULL OR k."lastUsedAt" < LEAST(u."at", now()))`;
}
