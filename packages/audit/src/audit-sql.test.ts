import { auditRow } from "./audit-entry";
import { SYSTEM_CONTEXT } from "./audit-context";
import { AUDIT_COLUMN_LIST, AUDIT_INSERT_ROWS_MAX, writeAuditRows } from "./audit-sql";

const COLUMNS = AUDIT_COLUMN_LIST.split(", ");
const TARGET_ID = COLUMNS.indexOf('"targetId"');

describe("writeAuditRows", () => {
  it("splits a large write into INSERTs PostgreSQL can bind (a retention batch may purge thousands of records)", async () => {
    const at = new Date("2026-01-01T00:00:00.000Z");
    const rows = Array.from({ length: 2 * AUDIT_INSERT_ROWS_MAX + 1 }, (_, i) =>
      auditRow("0193a4b2-0000-7000-8000-000000000001", { action: "client.purged", target: { type: "client", id: `c${i}` } }, SYSTEM_CONTEXT, at),
    );
    const statements: Array<{ sql: string; params: unknown[] }> = [];
    const tx = { $executeRawUnsafe: async (sql: string, ...params: unknown[]) => statements.push({ sql, params }) };
    await writeAuditRows(tx, "records", rows);
    expect(statements.map((s) => s.params.length / COLUMNS.length)).toEqual([AUDIT_INSERT_ROWS_MAX, AUDIT_INSERT_ROWS_MAX, 1]);
    expect(statements.every((s) => s.params.length <= 65_535 && s.sql.startsWith('INSERT INTO "records"."AuditEntry"'))).toBe(true);
    // Every row once, in order.
    expect(statements.flatMap((s) => s.params.filter((_, i) => i % COLUMNS.length === TARGET_ID))).toEqual(rows.map((row) => row.targetId));
    await writeAuditRows(tx, "records", []);
    expect(statements).toHaveLength(3);
  });
});
