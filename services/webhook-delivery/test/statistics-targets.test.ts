// Every column of the delivery tables has a statistics target of 10 or less (migration
// 20261126173000_statistics_targets). ANALYZE samples 300 rows per unit of the largest target among a
// table's columns, so a single column left at the default (100) brings back the 30,000-row sample that
// embedded PGlite's ANALYZE paid for on the thread that answers every statement (docs/performance.md).
// A column added to these tables needs `ALTER COLUMN ... SET STATISTICS` in its migration.
import type { SqlRunner } from "@crm/database";
import { openTestDatabase } from "@crm/testing";
import { databaseModes } from "./support/harness";
import { MIGRATIONS_DIR } from "./support/migrations";

/** Columns of `table` whose statistics target is above `target` or the default (-1 on PostgreSQL 15, null since 17). */
async function columnsSampledAbove(sql: SqlRunner, table: string, target: number): Promise<string[]> {
  const { rows } = await sql.query<{ name: string }>(
    `SELECT attname AS name FROM pg_attribute
     WHERE attrelid = $1::regclass AND attnum > 0 AND NOT attisdropped AND (attstattarget IS NULL OR attstattarget < 0 OR attstattarget > $2::int)
     ORDER BY attnum`,
    [table, target],
  );
  return rows.map((row) => row.name);
}

describe.each(databaseModes)("statistics targets on %s", (mode) => {
  it("sample every column of the delivery tables at target 10 at most, and their bodies not at all", async () => {
    const { database: db, close } = await openTestDatabase(mode, { prefix: "webhooks_test", schema: "webhooks", migrationsDir: MIGRATIONS_DIR, poolSize: 1 });
    try {
      for (const table of [`webhooks."Delivery"`, `webhooks."DeliveryAttempt"`, `webhooks."Payload"`]) {
        expect({ table, columns: await columnsSampledAbove(db.sql, table, 10) }).toEqual({ table, columns: [] });
      }
      expect(await columnsSampledAbove(db.sql, `webhooks."Payload"`, 0)).toEqual(["id", "eventId", "createdAt"]);
      expect(await columnsSampledAbove(db.sql, `webhooks."DeliveryAttempt"`, 0)).not.toContain("responseBody");
      expect(await columnsSampledAbove(db.sql, `webhooks."Delivery"`, 0)).not.toContain("responseBody");
    } finally {
      await close();
    }
  }, 60_000);
});
