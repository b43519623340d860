// The relay's view of the outbox table: pending rows in sequence order, marking them sent or
// dead-lettered, and a lease row so only one relay per database publishes at a time (events stay in
// order per business).
//
// Every statement goes through the database driver (pg's pool, or PGlite), not Prisma: the relay
// runs a round per burst of writes, and Prisma's query path cost more CPU than the statement itself
// (docs/performance.md, "Writes: where POST /client waits"). Each text is constant (every value is a
// parameter), so each is prepared once per connection under its name: PostgreSQL parsed and planned
// them on every round before.
//
// A row's payload is read as the JSON text PostgreSQL keeps (with the envelope's id and type beside
// it) and published as it is: parsing it here only for the bus to serialise it again (twice) cost this
// process about as much CPU as the rest of reading the row (docs/performance.md, "The event path").
import type { SqlRunner } from "@crm/database";
import type { OutboxRow, OutboxStore } from "@crm/event-bus";

const LEASE_NAME = "records-outbox-relay";
const OUTBOX = `"records"."OutboxEvent"`;
/** The columns a pending read returns (`id` is the envelope's id). */
const PENDING_COLUMNS = `"sequence", "topic", "key", "id", "payload"::text AS "json", "payload"->>'type' AS "type", "traceparent"`;

interface PendingRow {
  sequence: string | number | bigint;
  topic: string;
  key: string;
  id: string;
  json: string;
  type: string;
  traceparent: string | null;
}

function outboxRow(row: PendingRow): OutboxRow {
  return {
    // int8 arrives as text from pg, as a bigint or number from PGlite.
    sequence: BigInt(row.sequence),
    topic: row.topic,
    key: row.key,
    payload: { json: row.json, id: row.id, type: row.type },
    ...(row.traceparent ? { traceparent: row.traceparent } : {}),
  };
}

export class SqlOutboxStore implements OutboxStore {
  constructor(private readonly sql: Pick<SqlRunner, "query">) {}

  async pending(limit: number): Promise<OutboxRow[]> {
    const { rows } = await this.sql.query<PendingRow>(
      `SELECT ${PENDING_COLUMNS} FROM ${OUTBOX}
       WHERE "sentAt" IS NULL AND "deadLetteredAt" IS NULL ORDER BY "sequence" ASC LIMIT $1`,
      [Math.trunc(limit)],
      { name: "outbox_pending" },
    );
    return rows.map(outboxRow);
  }

  /**
   * The update runs as a data-modifying CTE, exactly once; the select sees the table as it was before
   * it (one snapshot), so the rows just marked are left out by their sequences.
   */
  async markSentAndPending(sequences: readonly bigint[], limit: number): Promise<OutboxRow[]> {
    const { rows } = await this.sql.query<PendingRow>(
      `WITH sent AS (UPDATE ${OUTBOX} SET "sentAt" = $1 WHERE "sequence" = ANY($2::bigint[]) AND "sentAt" IS NULL)
       SELECT ${PENDING_COLUMNS} FROM ${OUTBOX}
       WHERE "sentAt" IS NULL AND "deadLetteredAt" IS NULL AND "sequence" <> ALL($2::bigint[]) ORDER BY "sequence" ASC LIMIT $3`,
      [new Date(), sequences.map(String), Math.trunc(limit)],
      { name: "outbox_mark_sent_and_pending" },
    );
    return rows.map(outboxRow);
  }

  async markSent(sequences: readonly bigint[]): Promise<void> {
    if (sequences.length === 0) return;
    await this.sql.query(`UPDATE ${OUTBOX} SET "sentAt" = $1 WHERE "sequence" = ANY($2::bigint[]) AND "sentAt" IS NULL`, [new Date(), sequences.map(String)], {
      name: "outbox_mark_sent",
    });
  }

  async deadLetter(sequence: bigint, reason: string): Promise<void> {
    await this.sql.query(`UPDATE ${OUTBOX} SET "deadLetteredAt" = $1, "deadLetterError" = $2 WHERE "sequence" = $3 AND "sentAt" IS NULL AND "deadLetteredAt" IS NULL`, [
      new Date(),
      reason,
      String(sequence),
    ]);
  }

  /** Takes the lease when free or expired, renews it when already held; the database clock decides expiry. */
  async acquireLease(holder: string, ttlMs: number): Promise<boolean> {
    const { rows } = await this.sql.query<{ holder: string }>(
      `INSERT INTO "records"."OutboxLease" ("name", "holder", "expiresAt")
       VALUES ($1, $2, now() + ($3::int * interval '1 millisecond'))
       ON CONFLICT ("name") DO UPDATE SET "holder" = EXCLUDED."holder", "expiresAt" = EXCLUDED."expiresAt"
       WHERE "OutboxLease"."holder" = EXCLUDED."holder" OR "OutboxLease"."expiresAt" < now()
       RETURNING "holder"`,
      [LEASE_NAME, holder, Math.round(ttlMs)],
      { name: "outbox_lease" },
    );
    return rows.length === 1;
  }

  async releaseLease(holder: string): Promise<void> {
    await this.sql.query(`UPDATE "records"."OutboxLease" SET "expiresAt" = now() - interval '1 second' WHERE "name" = $1 AND "holder" = $2`, [LEASE_NAME, holder]);
  }

  /** Unsent rows (dead-lettered ones excluded) and the age of the oldest, for the outbox metrics. */
  async backlog(): Promise<{ unsent: number; oldestAgeSeconds: number }> {
    const { rows } = await this.sql.query<{ unsent: number; oldest_age_s: number | null }>(
      `SELECT count(*)::int AS unsent, extract(epoch FROM now() - min("createdAt"))::float8 AS oldest_age_s
       FROM ${OUTBOX} WHERE "sentAt" IS NULL AND "deadLetteredAt" IS NULL`,
    );
    const row = rows[0];
    return { unsent: row?.unsent ?? 0, oldestAgeSeconds: Math.max(0, row?.oldest_age_s ?? 0) };
  }
}
