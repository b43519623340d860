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

/** The channel the relay's mark statements notify, with the businesses whose events became readable. */
export const FEED_CHANNEL = "records_feed";

/**
 * Marks the rows `$2` (sequences, in the order they were published) sent at `$1` and gives each the
 * next change-feed position in that order (extensions §E6). The counter row's UPDATE takes its row
 * lock until commit, so a concurrent mark (a relay that lost its lease mid-round) waits: positions
 * commit in the order they are given, and a feed reader never sees a position before every lower one.
 * Then NOTIFY (delivered on commit) names the businesses, comma-separated, or `*` when too many for
 * one notification's 8,000 bytes.
 */
const MARK_SENT = `
  marked AS (SELECT t."seq", t."ord" FROM unnest($2::bigint[]) WITH ORDINALITY AS t("seq", "ord")),
  counter AS (
    UPDATE "records"."FeedCounter" SET "last" = "last" + (SELECT count(*) FROM marked) WHERE "id" = 1
    RETURNING "last" - (SELECT count(*) FROM marked) AS "base"
  ),
  sent AS (
    UPDATE ${OUTBOX} AS o SET "sentAt" = $1, "feedPosition" = counter."base" + marked."ord"
    FROM marked, counter WHERE o."sequence" = marked."seq" AND o."sentAt" IS NULL
    RETURNING o."key"
  ),
  notified AS (
    SELECT pg_notify('${FEED_CHANNEL}', CASE WHEN length(keys) > 7900 THEN '*' ELSE keys END) AS n
    FROM (SELECT string_agg(DISTINCT "key", ',') AS keys FROM sent) AS s WHERE keys IS NOT NULL
  )`;

export class SqlOutboxStore implements OutboxStore {
  /** Businesses of rows read as pending, by sequence: who to wake in this process once they are marked. */
  private readonly businessOf = new Map<bigint, string>();

  /**
   * `onReadable` is told, after each mark, which businesses have new events in the feed (the feed's
   * waiters in this process; other processes hear the NOTIFY).
   */
  constructor(
    private readonly sql: Pick<SqlRunner, "query">,
    private readonly onReadable: (businessIds: ReadonlySet<string>) => void = () => undefined,
  ) {}

  private remember(rows: OutboxRow[]): OutboxRow[] {
    for (const row of rows) this.businessOf.set(row.sequence, row.key);
    return rows;
  }

  private readable(sequences: readonly bigint[]): void {
    const businesses = new Set<string>();
    for (const sequence of sequences) {
      const business = this.businessOf.get(sequence);
      if (business !== undefined) businesses.add(business);
      this.businessOf.delete(sequence);
    }
    if (businesses.size > 0) this.onReadable(businesses);
  }

  async pending(limit: number): Promise<OutboxRow[]> {
    this.businessOf.clear();
    const { rows } = await this.sql.query<PendingRow>(
      `SELECT ${PENDING_COLUMNS} FROM ${OUTBOX}
       WHERE "sentAt" IS NULL AND "deadLetteredAt" IS NULL ORDER BY "sequence" ASC LIMIT $1`,
      [Math.trunc(limit)],
      { name: "outbox_pending" },
    );
    return this.remember(rows.map(outboxRow));
  }

  /**
   * The update runs as a data-modifying CTE, exactly once; the select sees the table as it was before
   * it (one snapshot), so the rows just marked are left out by their sequences.
   */
  async markSentAndPending(sequences: readonly bigint[], limit: number): Promise<OutboxRow[]> {
    const { rows } = await this.sql.query<PendingRow>(
      `WITH ${MARK_SENT}
       SELECT ${PENDING_COLUMNS} FROM ${OUTBOX}, (SELECT count(*) FROM notified) AS n
       WHERE "sentAt" IS NULL AND "deadLetteredAt" IS NULL AND "sequence" <> ALL($2::bigint[]) ORDER BY "sequence" ASC LIMIT $3`,
      [new Date(), sequences.map(String), Math.trunc(limit)],
      { name: "outbox_mark_sent_and_pending" },
    );
    this.readable(sequences);
    return this.remember(rows.map(outboxRow));
  }

  async markSent(sequences: readonly bigint[]): Promise<void> {
    if (sequences.length === 0) return;
    await this.sql.query(`WITH ${MARK_SENT} SELECT count(*) FROM notified`, [new Date(), sequences.map(String)], { name: "outbox_mark_sent" });
    this.readable(sequences);
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
