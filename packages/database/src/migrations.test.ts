// The migration runner: transactional migrations, and those marked NO_TRANSACTION, which run statement
// by statement so that an index can be built CONCURRENTLY (never blocking writes) on PostgreSQL and on
// embedded PGlite alike.
import { randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { Client } from "pg";
import { applyMigrations, runsOutsideTransaction, type SqlRunner, splitStatements } from "./migrations";
import { createPglite } from "./pglite";

/** The test PostgreSQL jest's global setup found (@crm/testing's testInfra; not imported: it depends on this package). */
const adminUrl = process.env.TEST_DATABASE_URL;
const describePostgres: jest.Describe = adminUrl ? describe : describe.skip;

const CONCURRENT_INDEX = `--! no-transaction
-- Built without blocking writes.
SET lock_timeout = '2s';
CREATE INDEX CONCURRENTLY IF NOT EXISTS "T_name_idx" ON "m"."T" ("name");
`;

function migrationsDir(migrations: Record<string, string>): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), "crm-migrations-"));
  for (const [name, sql] of Object.entries(migrations)) {
    mkdirSync(path.join(dir, name));
    writeFileSync(path.join(dir, name, "migration.sql"), sql);
  }
  return dir;
}

describe("splitStatements", () => {
  it("splits at semicolons outside quotes, dollar quotes and comments, and drops empty statements", () => {
    const sql = `-- a; comment
SET lock_timeout = '5s;';
CREATE FUNCTION f() RETURNS trigger AS $$ BEGIN RETURN NULL; END $$ LANGUAGE plpgsql;
/* block; */ CREATE INDEX "a;b" ON t (x);
-- trailing comment only
`;
    expect(splitStatements(sql).map((s) => s.trim())).toEqual([
      "-- a; comment\nSET lock_timeout = '5s;';",
      "CREATE FUNCTION f() RETURNS trigger AS $$ BEGIN RETURN NULL; END $$ LANGUAGE plpgsql;",
      '/* block; */ CREATE INDEX "a;b" ON t (x);',
    ]);
  });

  it("knows a no-transaction migration by its first line only", () => {
    expect(runsOutsideTransaction(CONCURRENT_INDEX)).toBe(true);
    expect(runsOutsideTransaction(`-- hello\n--! no-transaction\nSELECT 1;`)).toBe(false);
  });
});

async function appliesBothKinds(runner: SqlRunner, schema: string): Promise<void> {
  const dir = migrationsDir({
    "1_init": `CREATE TABLE "m"."T" (id int PRIMARY KEY, name text);`,
    "2_name_index": CONCURRENT_INDEX,
  });
  try {
    await runner.exec(`CREATE SCHEMA IF NOT EXISTS "m"`);
    expect(await applyMigrations(runner, schema, dir)).toEqual(["1_init", "2_name_index"]);
    const index = await runner.query<{ indisvalid: boolean }>(`SELECT indisvalid FROM pg_index WHERE indexrelid = '"m"."T_name_idx"'::regclass`);
    expect(index.rows).toEqual([{ indisvalid: true }]);
    // The migration's session-wide SET is not left on the connection.
    expect((await runner.query<{ lock_timeout: string }>("SHOW lock_timeout")).rows[0]?.lock_timeout).toBe("0");
    const recorded = await runner.query<{ migration_name: string; done: boolean }>(
      `SELECT migration_name, finished_at IS NOT NULL AS done FROM "${schema}"."_prisma_migrations" ORDER BY migration_name`,
    );
    expect(recorded.rows).toEqual([
      { migration_name: "1_init", done: true },
      { migration_name: "2_name_index", done: true },
    ]);
    expect(await applyMigrations(runner, schema, dir)).toEqual([]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describePostgres("applyMigrations on PostgreSQL", () => {
  let admin: Client;
  let client: Client;
  let runner: SqlRunner;
  const name = `crm_migrations_${randomBytes(4).toString("hex")}`;
  beforeAll(async () => {
    admin = new Client({ connectionString: adminUrl });
    await admin.connect();
    await admin.query(`CREATE DATABASE "${name}"`);
    const url = new URL(adminUrl!);
    url.pathname = `/${name}`;
    client = new Client({ connectionString: url.toString() });
    await client.connect();
    runner = { exec: (sql) => client.query(sql), query: async <T>(sql: string, params?: unknown[]) => ({ rows: (await client.query(sql, params)).rows as T[] }) };
  });
  afterAll(async () => {
    await client?.end();
    await admin?.query(`DROP DATABASE IF EXISTS "${name}"`);
    await admin?.end();
  });

  it("runs a marked migration outside a transaction (CREATE INDEX CONCURRENTLY) and records it", async () => {
    await appliesBothKinds(runner, "m");
  });

  it("would fail that migration inside a transaction: the marker is what makes it work", async () => {
    await client.query(`CREATE TABLE "m"."U" (id int)`);
    await expect(client.query(`BEGIN; CREATE INDEX CONCURRENTLY "U_idx" ON "m"."U" (id); COMMIT;`)).rejects.toThrow(/transaction block/);
    await client.query("ROLLBACK");
  });

  it("lets two starters apply a concurrent index together: the second waits without holding a transaction open", async () => {
    const url = new URL(adminUrl!);
    url.pathname = `/${name}`;
    const clients = [new Client({ connectionString: url.toString() }), new Client({ connectionString: url.toString() })];
    const dir = migrationsDir({
      "1_init": `CREATE TABLE "m2"."T" (id int PRIMARY KEY, name text);`,
      "2_name_index": CONCURRENT_INDEX.replaceAll('"m"', '"m2"'),
    });
    try {
      await Promise.all(clients.map((c) => c.connect()));
      await client.query(`CREATE SCHEMA "m2"`);
      const runs = await Promise.all(
        clients.map((c) =>
          applyMigrations({ exec: (sql) => c.query(sql), query: async <T>(sql: string, params?: unknown[]) => ({ rows: (await c.query(sql, params)).rows as T[] }) }, "m2", dir),
        ),
      );
      // One applied both, the other found them applied (with pg_advisory_lock: "deadlock detected").
      expect(runs.map((r) => r.length).sort()).toEqual([0, 2]);
    } finally {
      await Promise.all(clients.map((c) => c.end()));
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("records a failing no-transaction migration as failed, and resets the session's timeouts", async () => {
    const dir = migrationsDir({ "3_bad": `--! no-transaction\nSET lock_timeout = '1s';\nCREATE INDEX CONCURRENTLY "X_idx" ON "m"."Missing" (id);\n` });
    try {
      await expect(applyMigrations(runner, "m", dir)).rejects.toThrow(/Missing/);
      expect((await client.query("SHOW lock_timeout")).rows[0].lock_timeout).toBe("0");
      await expect(applyMigrations(runner, "m", dir)).rejects.toThrow(/previously failed/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("applyMigrations on embedded PGlite", () => {
  it("runs a marked migration outside a transaction (CREATE INDEX CONCURRENTLY) and records it", async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "crm-pglite-"));
    const pglite = await createPglite(path.join(dir, "pglite"));
    try {
      await appliesBothKinds({ exec: (sql) => pglite.exec(sql), query: async <T>(sql: string, params?: unknown[]) => ({ rows: (await pglite.query<T>(sql, params)).rows }) }, "m");
    } finally {
      await pglite.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
