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
    const rows = await this.prisma.$queryRaw<Array<{ id: string; secret: string }>>`
      SELECT id::text AS id, secret FROM ${WEBHOOK}
      WHERE (left(secret, 6) = 'whsec_' OR split_part(secret, ':', 2) = ANY(${olderKeys}::text[])) ${after}
      ORDER BY id
      LIMIT ${limit}`;
    for (const row of rows) {
      if (await this.reencrypt(row)) this.reencryptedThisPass++;
    }
    this.after = rows.at(-1)?.id ?? this.after;
    if (rows.length < limit) await this.endPass();
    return rows.length;
  }

  /** How many secrets are sealed with each key: an older key may be removed once it has no rows. */
  async counts(): Promise<SecretKeyCounts> {
    const rows = await this.prisma.$queryRaw<Array<{ key: string; n: number }>>`
      SELECT CASE WHEN left(secret, 6) = 'whsec_' THEN ${PLAINTEXT} ELSE split_part(secret, ':', 2) END AS key, count(*)::int AS n
      FROM ${WEBHOOK} GROUP BY 1`;
    return Object.fromEntries(rows.map((r) => [r.key, Number(r.n)]));
  }

  private async reencrypt(row: { id: string; secret: string }): Promise<boolean> {
    let secret: string;
    try {
      secret = this.keyring.open(row.id, row.secret);
    } catch (err) {
      if (!(err instanceof UnreadableSecretError)) throw err;
      this.logger.error({ webhookId: row.id, keyId: err.keyId, reason: err.reason }, "webhook secret cannot be decrypted; not re-encrypted");
      return false;
    }
    // Raw SQL, not Prisma's update: re-encryption is not a change of the webhook (updatedAt stays).
    const changed = await this.prisma.$executeRaw`
      UPDATE ${WEBHOOK} SET secret = ${this.keyring.seal(row.id, secret)} WHERE id = ${row.id}::uuid AND secret = ${row.secret}`;
    return changed > 0;
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
