// A create sent with an Idempotency-Key claims the key in its own statement or transaction (issue 42).
// The gateway keeps each key's answer, but when a create's outcome is unknown (the database dropped
// the connection around its commit: 503000) it frees the key for a retry, and a Redis that lost its
// data forgets every key. Then the retry reaches this service again: the claim's primary key refuses
// it, and the records the first run created are answered instead of created a second time.
import type { RetentionRule } from "@crm/service-kit";
import { ageRetentionRule } from "./age-retention";
import { Prisma, type PrismaClient, type Tx } from "./prisma";

const TABLE = `"records"."IdempotentCreate"`;
const PRIMARY_KEY = "IdempotentCreate_pkey";
/** As long as the gateway keeps an answer (decisions §7). */
export const CLAIM_RETENTION_MS = 24 * 60 * 60 * 1000;

/** Who sent which request under which key; digests only, the key itself is never stored. */
export interface CreateClaim {
  businessId: string;
  keyDigest: string;
  caller: string;
  fingerprint: string;
  entity: string;
}

/** The claim a first run left. */
export interface ClaimedCreate {
  caller: string;
  fingerprint: string;
  entity: string;
  recordIds: string[];
}

/** The CTE that claims `claim` for `recordIds` inside a create's one statement; `param` binds a value. */
export function claimCte(claim: CreateClaim, recordIds: readonly string[], param: (value: unknown) => string): string {
  return `"claim" AS (
  INSERT INTO ${TABLE} ("businessId", "keyDigest", "caller", "fingerprint", "entity", "recordIds")
  VALUES (${param(claim.businessId)}::uuid, ${param(claim.keyDigest)}, ${param(claim.caller)}, ${param(claim.fingerprint)}, ${param(claim.entity)}, ${param(recordIds)}::uuid[])
)`;
}

/** The same claim inside a create's transaction (invoices and quotes). */
export async function claimInTransaction(tx: Tx, claim: CreateClaim, recordIds: readonly string[]): Promise<void> {
  await tx.$executeRawUnsafe(
    `INSERT INTO ${TABLE} ("businessId", "keyDigest", "caller", "fingerprint", "entity", "recordIds") VALUES ($1::uuid, $2, $3, $4, $5, $6::uuid[])`,
    claim.businessId,
    claim.keyDigest,
    claim.caller,
    claim.fingerprint,
    claim.entity,
    [...recordIds],
  );
}

/** Whether `err` is a create refused because its key was claimed already (by the driver or by Prisma). */
export function isClaimTaken(err: unknown): boolean {
  for (let cause: unknown = err; typeof cause === "object" && cause !== null; cause = (cause as { cause?: unknown }).cause) {
    const { code, constraint, meta, message } = cause as { code?: unknown; constraint?: unknown; meta?: unknown; message?: unknown };
    if (code === "23505" && constraint === PRIMARY_KEY) return true;
    if (code === "P2010" || code === "P2002") {
      const text = `${JSON.stringify(meta ?? {})} ${typeof message === "string" ? message : ""}`;
      if (text.includes(PRIMARY_KEY)) return true;
    }
  }
  return false;
}

/** The claim of `claim`'s key in its business, if one was made. */
export async function claimedCreate(prisma: PrismaClient, claim: Pick<CreateClaim, "businessId" | "keyDigest">): Promise<ClaimedCreate | undefined> {
  const rows = await prisma.$queryRaw<ClaimedCreate[]>`
    SELECT "caller", "fingerprint", "entity", "recordIds"::text[] AS "recordIds" FROM ${Prisma.raw(TABLE)}
    WHERE "businessId" = ${claim.businessId}::uuid AND "keyDigest" = ${claim.keyDigest}`;
  return rows[0];
}

/** Claims older than the gateway keeps answers. */
export function idempotentCreateRetentionRule(prisma: PrismaClient): RetentionRule {
  return ageRetentionRule(prisma, { name: "idempotent creates", table: TABLE, digestColumn: "keyDigest", timestampColumn: "createdAt", retentionMs: CLAIM_RETENTION_MS });
}
