// The change feed's reads (extensions §E6): a business's published outbox rows after a feed position,
// in position order, through the ("key", "feedPosition") partial index. Positions are given by the
// relay when it publishes (outbox.store.ts, MARK_SENT); rows without one are not readable yet.
import type { SqlRunner } from "@crm/database";

export interface FeedRow {
  position: bigint;
  /** The envelope as stored (json: the text kept as written). */
  json: string;
}

export class FeedStore {
  constructor(private readonly sql: Pick<SqlRunner, "query">) {}

  /** Up to `limit` events of `businessId` after `after`, of the given types (all when undefined). */
  async after(businessId: string, after: bigint, types: readonly string[] | undefined, limit: number): Promise<FeedRow[]> {
    const { rows } = await this.sql.query<{ position: string | number | bigint; json: string }>(
      `SELECT "feedPosition" AS "position", "payload"::text AS "json" FROM "records"."OutboxEvent"
       WHERE "key" = $1 AND "feedPosition" > $2 AND "feedPosition" IS NOT NULL AND ($3::text[] IS NULL OR "payload"->>'type' = ANY($3::text[]))
       ORDER BY "feedPosition" ASC LIMIT $4`,
      [businessId, String(after), types ? [...types] : null, limit],
      { name: "feed_after" },
    );
    return rows.map((row) => ({ position: BigInt(row.position), json: row.json }));
  }

  /** The highest position retention has deleted for `businessId`; 0 when none. */
  async horizon(businessId: string): Promise<bigint> {
    const { rows } = await this.sql.query<{ position: string | number | bigint }>(`SELECT "position" FROM "records"."FeedHorizon" WHERE "businessId" = $1`, [businessId], {
      name: "feed_horizon",
    });
    return rows[0] ? BigInt(rows[0].position) : 0n;
  }
}
