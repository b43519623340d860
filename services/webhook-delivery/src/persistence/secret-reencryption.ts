import type { Logger } from "@crm/logger";
import { type SecretKeyring, UnreadableSecretError } from "../domain/secret-keyring";
import { Prisma, type PrismaClient } from "../generated/prisma/client";

const WEBHOOK = Prisma.raw(`"webhooks"."Webhook"`);
/** Label of rows from before encryption in `SecretKeyCounts`. */
export const PLAINTEXT = "plaintext";

/** Webhooks per key id their secret is sealed with (`plaintext`: not sealed yet). */
export type SecretKeyCounts = Record<string, number>;

/**
 * Brings every stored secret under the current key: plaintext rows from before encryption and rows
 * sealed with an older key of WEBHOOK_SECRET_KEYS. Runs in keyset-paginated batches (a pass walks the
 * table once by id, so a row that cannot be opened is reported and skipped, never retried in a loop).
 * Each row is replaced by compare-and-set on the value read, so several instances, or a concurrent
 * rotate-secret, never overwrite each other: the later writer simply changes nothing.
 */
export class SecretReencryption {
  private after: string | undefined;
  private reencryptedThisPass = 0;

  constructor(
    private readonly prisma: PrismaClient,
    private readonly keyring: SecretKeyring,
    private readonly logger: Logger,
  ) {}

  /** One batch of at most `limit` rows; returns how many rows it examined (fewer than limit: pass done). */
  async batch(limit: number): Promise<number> {
    const current = this.keyring.current.id;
    const olderKeys = this.keyring.keyIds.filter((id) => id !== current);
    const after = this.after === undefined ? Prisma.empty : Prisma.sql`AND id > ${this.after}::uuid`;
    if (this.after === undefined) await this.forgetExpiredPreviousSecrets();
    // A rotated-away secret in its grace period (extensions §E1.1) is moved to the current key too.
    const rows = await this.prisma.$queryRaw<Array<{ id: string; secret: string; previousSecret: string | null }>>`
      SELECT id::text AS id, secret, "previousSecret" FROM ${WEBHOOK}
      WHERE (left(secret, 6) = 'whsec_' OR split_part(secret, ':', 2) = ANY(${olderKeys}::text[])
             OR left("previousSecret", 6) = 'whsec_' OR split_part("previousSecret", ':', 2) = ANY(${olderKeys}::text[])) ${after}
      ORDER BY id
      LIMIT ${limit}`;
    for (const row of rows) {
      if (await this.reencrypt(row)) this.reencryptedThisPass++;
    }
    this.after = rows.at(-1)?.id ?? this.after;
    if (rows.length < limit) await this.endPass();
    return rows.length;
  }

  /**
   * A rotated-away secret whose grace period is over signs nothing any more: it is not kept at rest
   * (not even sealed) longer than one pass of this job.
   */
  private async forgetExpiredPreviousSecrets(): Promise<void> {
    await this.prisma.$executeRaw`
      UPDATE ${WEBHOOK} SET "previousSecret" = NULL, "previousSecretExpiresAt" = NULL
      WHERE "previousSecret" IS NOT NULL AND "previousSecretExpiresAt" <= now()`;
  }

  /**
   * How many secrets are sealed with each key (current ones, and rotated-away ones still in their
   * grace period): an older key may be removed once it has none.
   */
  async counts(): Promise<SecretKeyCounts> {
    const rows = await this.prisma.$queryRaw<Array<{ key: string; n: number }>>`
      SELECT CASE WHEN left(s, 6) = 'whsec_' THEN ${PLAINTEXT} ELSE split_part(s, ':', 2) END AS key, count(*)::int AS n
      FROM (
        SELECT secret AS s FROM ${WEBHOOK}
        UNION ALL
        SELECT "previousSecret" FROM ${WEBHOOK} WHERE "previousSecret" IS NOT NULL AND "previousSecretExpiresAt" > now()
      ) AS sealed GROUP BY 1`;
    return Object.fromEntries(rows.map((r) => [r.key, Number(r.n)]));
  }

  private async reencrypt(row: { id: string; secret: string; previousSecret: string | null }): Promise<boolean> {
    const secret = this.resealed(row.id, row.secret);
    const previous = row.previousSecret === null ? null : this.resealed(row.id, row.previousSecret);
    if (secret === undefined || previous === undefined) return false;
    // Raw SQL, not Prisma's update: re-encryption is not a change of the webhook (updatedAt stays).
    // Compare-and-set on both values read: a concurrent rotation (or instance) wins, nothing is lost.
    const changed = await this.prisma.$executeRaw`
      UPDATE ${WEBHOOK} SET secret = ${secret}, "previousSecret" = ${previous}
      WHERE id = ${row.id}::uuid AND secret = ${row.secret} AND "previousSecret" IS NOT DISTINCT FROM ${row.previousSecret}`;
    return changed > 0;
  }

  /** The value sealed with the current key (unchanged if it already is), or undefined when it cannot be opened. */
  private resealed(webhookId: string, stored: string): string | undefined {
    if (!this.keyring.needsReencryption(stored)) return stored;
    try {
      return this.keyring.seal(webhookId, this.keyring.open(webhookId, stored));
    } catch (err) {
      if (!(err instanceof UnreadableSecretError)) throw err;
      this.logger.error({ webhookId, keyId: err.keyId, reason: err.reason }, "webhook secret cannot be decrypted; not re-encrypted");
      return undefined;
    }
  }

  private async endPass(): Promise<void> {
    const reencrypted = this.reencryptedThisPass;
    this.after = undefined;
    this.reencryptedThisPass = 0;
    const counts = await this.counts();
    const current = this.keyring.current.id;
    const known = new Set(this.keyring.keyIds);
    const unknown = Object.entries(counts).filter(([key]) => key !== PLAINTEXT && !known.has(key));
    if (unknown.length > 0) {
      this.logger.error(
        { unknownKeys: Object.fromEntries(unknown) },
        "webhook secrets are sealed with keys missing from WEBHOOK_SECRET_KEYS; their deliveries fail until the key is added back",
      );
    }
    const pending = Object.entries(counts).filter(([key]) => key !== current && (key === PLAINTEXT || known.has(key)));
    if (reencrypted === 0 && pending.length === 0 && known.size === 1) return;
    const summary = { currentKey: current, reencrypted, secretsPerKey: counts };
    if (pending.length === 0) {
      this.logger.info(summary, "every webhook secret is sealed with the current key; older WEBHOOK_SECRET_KEYS entries can be removed");
    } else {
      this.logger.info(summary, "webhook secrets re-encrypted; some are still sealed with older keys");
    }
  }
}
