// A connection cut at COMMIT on a real PostgreSQL (issue 42), through the harness's TCP proxy: the
// COMMIT reaches the server and its answer is lost (settled: committed), it never reaches the server
// (settled: rolled back), or the server cannot be asked afterwards (in doubt). And the other places a
// write's connection can be lost. Each test's database is its own: the server is shared.
import { randomBytes } from "node:crypto";
import { Client } from "pg";
import { DependencyUnavailableError } from "@crm/errors";
// The harness's proxy, by path: @crm/testing depends on this package, so it is not a dependency of it.
import { FaultProxy, isPostgresCommit as isCommitMessage } from "../../testing/src/fault-proxy";
import { SETTLE_BUDGET_MS } from "./commit-settlement";
import { FaultTolerantPool } from "./fault-tolerant-pool";

const adminUrl = process.env.TEST_DATABASE_URL;
const describePostgres: jest.Describe = adminUrl ? describe : describe.skip;

describePostgres("a write whose connection is lost, on PostgreSQL behind a proxy", () => {
  let admin: Client;
  let proxy: FaultProxy;
  let pool: FaultTolerantPool;
  const database = `lost_commit_${randomBytes(6).toString("hex")}`;

  beforeAll(async () => {
    admin = new Client({ connectionString: adminUrl });
    await admin.connect();
    await admin.query(`CREATE DATABASE "${database}"`);
    const target = new URL(adminUrl!);
    proxy = await FaultProxy.start({ target: { host: target.hostname, port: Number(target.port || 5432) } });
    const url = new URL(adminUrl!);
    url.host = proxy.address;
    url.pathname = `/${database}`;
    pool = new FaultTolerantPool({ connectionString: url.toString(), max: 4 });
    pool.on("error", () => undefined);
    await pool.query("CREATE TABLE t (id text PRIMARY KEY)");
  });
  afterAll(async () => {
    await pool?.end();
    await proxy?.close();
    await admin?.query(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`);
    await admin?.end();
  });
  afterEach(() => proxy.restore());

  /** Inserts `id` in a transaction on a client of the pool and commits: the COMMIT's result or error. */
  async function insertAndCommit(id: string): Promise<{ value?: unknown; error?: unknown }> {
    const client = await pool.connect();
    client.on("error", () => undefined);
    let failed: unknown;
    try {
      await client.query("BEGIN");
      await client.query("INSERT INTO t (id) VALUES ($1)", [id]);
      return { value: await client.query("COMMIT") };
    } catch (error) {
      failed = error;
      return { error };
    } finally {
      client.release(failed as Error | undefined);
    }
  }

  /** Whether row `id` exists, asked through the pool once the proxy lets it through again. */
  async function exists(id: string): Promise<boolean> {
    const { rows } = await pool.query("SELECT count(*)::int AS n FROM t WHERE id = $1", [id]);
    return rows[0].n === 1;
  }

  it("COMMIT reached the server, its answer was lost: settled as committed, answered as COMMIT answers", async () => {
    const sprung = proxy.dropAt(isCommitMessage, { deliver: true });
    const outcome = await insertAndCommit("committed-1");
    await sprung;
    expect(outcome.error).toBeUndefined();
    expect(outcome.value).toMatchObject({ command: "COMMIT" });
    expect(await exists("committed-1")).toBe(true);
  });

  it("COMMIT never reached the server: settled as rolled back, not-written (the retry may run it again)", async () => {
    const sprung = proxy.dropAt(isCommitMessage, { deliver: false });
    const outcome = await insertAndCommit("dropped-1");
    await sprung;
    expect(outcome.error).toBeInstanceOf(DependencyUnavailableError);
    expect(outcome.error).toMatchObject({ dependency: "database", outcome: "not-written" });
    expect(await exists("dropped-1")).toBe(false);
  });

  it("COMMIT reached the server, which then could not be asked in time: in-doubt, answered within the budget", async () => {
    const sprung = proxy.dropAt(isCommitMessage, { deliver: true, cutAfter: true });
    const started = Date.now();
    const outcome = await insertAndCommit("unknown-1");
    const took = Date.now() - started;
    await sprung;
    expect(outcome.error).toBeInstanceOf(DependencyUnavailableError);
    expect(outcome.error).toMatchObject({ outcome: "in-doubt" });
    expect(took).toBeLessThan(SETTLE_BUDGET_MS + 1_500);
    proxy.restore();
    // It did commit: running the request again would have made it twice.
    expect(await exists("unknown-1")).toBe(true);
  });

  it("a statement inside a transaction whose connection is lost: not-written", async () => {
    const client = await pool.connect();
    client.on("error", () => undefined);
    try {
      await client.query("BEGIN");
      const sprung = proxy.dropAt((chunk) => chunk.includes("inside-1"), { deliver: false });
      const error = await client.query("INSERT INTO t (id) VALUES ('inside-1')").catch((err: unknown) => err);
      await sprung;
      expect(error).toMatchObject({ outcome: "not-written" });
    } finally {
      client.release(true);
    }
    expect(await exists("inside-1")).toBe(false);
  });

  it("a write on its own whose connection is lost after it reached the server: in-doubt", async () => {
    const sprung = proxy.dropAt((chunk) => chunk.includes("alone-1"), { deliver: true });
    const error = await pool.query("INSERT INTO t (id) VALUES ('alone-1')").catch((err: unknown) => err);
    await sprung;
    expect(error).toBeInstanceOf(DependencyUnavailableError);
    expect(error).toMatchObject({ outcome: "in-doubt" });
  });

  it("a write on its own that cannot reach the server at all (refused): not-written", async () => {
    const nowhere = new URL(adminUrl!);
    nowhere.port = "1";
    const unreachable = new FaultTolerantPool({ connectionString: nowhere.toString(), max: 1 });
    unreachable.on("error", () => undefined);
    try {
      const error = await unreachable.query("INSERT INTO t (id) VALUES ('refused-1')").catch((err: unknown) => err);
      expect(error).toBeInstanceOf(DependencyUnavailableError);
      expect(error).toMatchObject({ outcome: "not-written" });
    } finally {
      await unreachable.end();
    }
  });

  it("a write on its own whose connection could not be made (the proxy resets it): not-written", async () => {
    proxy.cut(); // drops the pool's idle connections too (they leave the pool): the write needs a new one
    await new Promise((resolve) => setTimeout(resolve, 50));
    const error = await pool.query("INSERT INTO t (id) VALUES ('reset-1')").catch((err: unknown) => err);
    expect(error).toBeInstanceOf(DependencyUnavailableError);
    expect(error).toMatchObject({ outcome: "not-written" });
  });

  it("a transaction that wrote nothing asks for no settlement: its lost COMMIT loses nothing", async () => {
    const client = await pool.connect();
    client.on("error", () => undefined);
    try {
      await client.query("BEGIN");
      await client.query("SELECT 1");
      const sprung = proxy.dropAt(isCommitMessage, { deliver: true, cutAfter: true });
      const started = Date.now();
      const error = await client.query("COMMIT").catch((err: unknown) => err);
      await sprung;
      expect(error).toMatchObject({ outcome: "not-written" });
      expect(Date.now() - started).toBeLessThan(1_000);
    } finally {
      client.release(true);
    }
  });
});
