// Connection faults on PostgreSQL: backends terminated mid-statement (what a failover or an
// operator's pg_terminate_backend does), a server that cannot be reached. Only this test's own
// backends are terminated (by application_name): the server is shared.
import { randomBytes } from "node:crypto";
import { Client } from "pg";
import { DependencyUnavailableError } from "@crm/errors";
import { FaultTolerantPool, isConnectionFault } from "./fault-tolerant-pool";
import { isRead } from "./write-outcome";

/** The test PostgreSQL jest's global setup found (@crm/testing's testInfra; not imported: it depends on this package). */
const adminUrl = process.env.TEST_DATABASE_URL;
const describePostgres: jest.Describe = adminUrl ? describe : describe.skip;

describe("isRead", () => {
  it.each([
    ["SELECT 1", true],
    ['  select "id" from "identity"."User" where "id" = $1', true],
    ["SELECT * FROM t FOR UPDATE SKIP LOCKED", false],
    ["SELECT * FROM t FOR NO KEY UPDATE", false],
    ["SELECT * FROM t FOR SHARE", false],
    ['INSERT INTO t VALUES (1) RETURNING "id"', false],
    ["UPDATE t SET n = 1", false],
    ["WITH claimed AS (SELECT id FROM t) UPDATE t SET n = 2", false],
    ["selection", false],
  ])("%s -> %s", (text, expected) => {
    expect(isRead(text)).toBe(expected);
  });
});

describe("isConnectionFault", () => {
  const withCode = (message: string, code: string) => Object.assign(new Error(message), { code });
  it("knows a lost connection from a failed statement", () => {
    expect(isConnectionFault(withCode("terminating connection due to administrator command", "57P01"))).toBe(true);
    expect(isConnectionFault(withCode("connect ECONNREFUSED 127.0.0.1:5432", "ECONNREFUSED"))).toBe(true);
    expect(isConnectionFault(withCode("connection failure", "08006"))).toBe(true);
    expect(isConnectionFault(new Error("Connection terminated unexpectedly"))).toBe(true);
    expect(isConnectionFault(withCode('duplicate key value violates unique constraint "x"', "23505"))).toBe(false);
    expect(isConnectionFault(withCode('syntax error at or near "SELEC"', "42601"))).toBe(false);
    expect(isConnectionFault("Connection terminated")).toBe(false);
  });
});

describePostgres("FaultTolerantPool on PostgreSQL", () => {
  let admin: Client;
  let url: string;
  const database = `fault_pool_${randomBytes(6).toString("hex")}`;
  let pool: FaultTolerantPool;
  const applicationName = `fault-test-${randomBytes(4).toString("hex")}`;

  beforeAll(async () => {
    admin = new Client({ connectionString: adminUrl });
    await admin.connect();
    await admin.query(`CREATE DATABASE "${database}"`);
    const target = new URL(adminUrl!);
    target.pathname = `/${database}`;
    url = target.toString();
    pool = new FaultTolerantPool({ connectionString: url, max: 4, application_name: applicationName });
    pool.on("error", () => undefined);
    await pool.query("CREATE TABLE t (n int)");
  });
  afterAll(async () => {
    await pool?.end();
    await admin?.query(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`);
    await admin?.end();
  });

  /** Terminates this pool's backends once each is running a statement that sleeps. */
  async function terminateWhileSleeping(sleepers: number): Promise<void> {
    for (let i = 0; i < 200; i++) {
      const { rows } = await admin.query("SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = $1 AND query LIKE '%pg_sleep%' AND state = 'active'", [
        applicationName,
      ]);
      if (rows[0].n >= sleepers) break;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    await admin.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1", [applicationName]);
  }

  it("sends a read whose connection was lost once more, on a fresh connection", async () => {
    const reads = Promise.all([1, 2].map((n) => pool.query("SELECT $1::int AS n, (SELECT 1 FROM pg_sleep(0.3)) = 1 AS slept", [n])));
    await terminateWhileSleeping(2);
    const results = await reads;
    expect(results.map((r) => r.rows[0])).toEqual([
      { n: 1, slept: true },
      { n: 2, slept: true },
    ]);
    // The pool goes on with new connections.
    expect((await pool.query("SELECT 3 AS n")).rows).toEqual([{ n: 3 }]);
  });

  it("does not send a write again: its connection lost, it is DependencyUnavailableError (it may or may not have committed)", async () => {
    // Its failure is taken at once: it may come while the test is still terminating.
    const write = pool.query("INSERT INTO t SELECT 1 FROM pg_sleep(0.5)").catch((err: unknown) => err);
    await terminateWhileSleeping(1);
    const failed = await write;
    expect(failed).toBeInstanceOf(DependencyUnavailableError);
    expect((failed as DependencyUnavailableError).dependency).toBe("database");
    expect((await pool.query("SELECT count(*)::int AS n FROM t")).rows).toEqual([{ n: 0 }]);
  });

  it("a transaction whose connection is lost fails with DependencyUnavailableError", async () => {
    const client = await pool.connect();
    try {
      await client.query("BEGIN");
      const statement = client.query("SELECT pg_sleep(0.5)").catch((err: unknown) => err);
      await terminateWhileSleeping(1);
      expect(await statement).toBeInstanceOf(DependencyUnavailableError);
    } finally {
      client.release(true);
    }
  });

  it("a connection lost while its transaction waits between statements does not throw out of the pool; its next statement is DependencyUnavailableError", async () => {
    const client = await pool.connect();
    try {
      await client.query("BEGIN");
      const lost = new Promise((resolve) => client.once("end", resolve));
      await admin.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1", [applicationName]);
      // pg emits "error" on a checked-out connection that has nothing in flight: with no listener, an
      // EventEmitter throws it, and the process would exit (the test would fail with "Unhandled error").
      await lost;
      await expect(client.query("SELECT 1")).rejects.toBeInstanceOf(DependencyUnavailableError);
    } finally {
      client.release();
    }
    expect((await pool.query("SELECT 2 AS n")).rows).toEqual([{ n: 2 }]);
  });

  /**
   * Opens a transaction on the admin connection that locks row 1 of a fresh table, starts `statement`
   * (which locks row 2, then waits for row 1), and once it waits, locks row 2: a deadlock, which the
   * statement (waiting longest) detects and is rolled back for. The admin transaction then commits.
   */
  async function deadlockWith(statement: (table: string) => Promise<unknown>): Promise<unknown> {
    const table = `d_${randomBytes(4).toString("hex")}`;
    await pool.query(`CREATE TABLE ${table} (id int, n int); INSERT INTO ${table} VALUES (2, 0); INSERT INTO ${table} VALUES (1, 0)`);
    // The admin connection is to another database: the holder is a connection of the pool's.
    const holder = await pool.connect();
    try {
      await holder.query("BEGIN");
      await holder.query(`UPDATE ${table} SET n = n + 1 WHERE id = 1`);
      const outcome = statement(table).then(
        (value) => ({ value }),
        (error: unknown) => ({ error }),
      );
      for (let i = 0; i < 200; i++) {
        const { rows } = await admin.query("SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = $1 AND wait_event_type = 'Lock'", [applicationName]);
        if (rows[0].n >= 1) break;
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      await holder.query(`UPDATE ${table} SET n = n + 10 WHERE id = 2`);
      await holder.query("COMMIT");
      return await outcome;
    } finally {
      holder.release();
    }
  }

  it("a statement on its own that a deadlock rolled back is sent once more, and succeeds", async () => {
    const outcome = await deadlockWith((table) => pool.query(`UPDATE ${table} SET n = n + 100 WHERE id IN (1, 2)`));
    expect(outcome).toEqual({ value: expect.objectContaining({ rowCount: 2 }) });
  });

  it("a transaction that a deadlock rolled back fails with DependencyUnavailableError (a 503, not a 500)", async () => {
    const client = await pool.connect();
    try {
      await client.query("BEGIN");
      const outcome = (await deadlockWith((table) => client.query(`UPDATE ${table} SET n = n + 100 WHERE id IN (1, 2)`))) as { error?: unknown };
      expect(outcome.error).toBeInstanceOf(DependencyUnavailableError);
      expect((outcome.error as Error).cause).toMatchObject({ code: "40P01" });
    } finally {
      await client.query("ROLLBACK").catch(() => undefined);
      client.release();
    }
  });

  it("a statement that fails on its own merits is passed on as it is", async () => {
    await expect(pool.query("SELEC 1")).rejects.toMatchObject({ code: "42601" });
    await expect(pool.query("SELECT * FROM no_such_table")).rejects.toMatchObject({ code: "42P01" });
  });

  it("a server that cannot be reached: reads and writes alike are DependencyUnavailableError", async () => {
    const nowhere = new URL(url);
    nowhere.port = "1";
    const unreachable = new FaultTolerantPool({ connectionString: nowhere.toString(), max: 2 });
    unreachable.on("error", () => undefined);
    try {
      await expect(unreachable.query("SELECT 1 AS n")).rejects.toBeInstanceOf(DependencyUnavailableError);
      await expect(unreachable.query("INSERT INTO t VALUES (2)")).rejects.toBeInstanceOf(DependencyUnavailableError);
    } finally {
      await unreachable.end();
    }
  });
});
