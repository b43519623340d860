import { messages, PGlite, type Results } from "@electric-sql/pglite";
import { PrismaPGlite } from "pglite-prisma-adapter";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { createPglite, ensureTemplate } from "../pglite";
import type { PreparedPGlite } from "../prepared-pglite";
import { databaseParsers, decodeResult } from "../raw-result";
import type { Worker } from "node:worker_threads";
import { DependencyUnavailableError } from "@crm/errors";
import { outcomeIfThreadEnds, PgliteThread } from "./client";

const SCHEMA = `CREATE TABLE t (id int PRIMARY KEY, name text NOT NULL, tags text[], data jsonb, at timestamptz, raw bytea, big int8, amount numeric(12,2));
  CREATE TABLE child (id int PRIMARY KEY, parent int NOT NULL REFERENCES t(id));`;

describe("PGlite on its own thread", () => {
  let dir: string;
  let thread: PgliteThread;
  let local: PreparedPGlite;

  beforeAll(async () => {
    await ensureTemplate();
    dir = mkdtempSync(path.join(os.tmpdir(), "crm-pglite-thread-"));
    thread = await PgliteThread.open(path.join(dir, "thread"));
    local = await createPglite(path.join(dir, "local"));
    await thread.exec(SCHEMA);
    await local.exec(SCHEMA);
  }, 60_000);
  afterAll(async () => {
    await thread?.close();
    await local?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** Runs the same call on the thread and on PGlite in this thread. */
  async function both<T>(run: (db: Pick<PGlite, "query" | "exec" | "transaction">) => Promise<T>): Promise<[T, T]> {
    return [await run(thread), await run(local)];
  }

  it("returns what PGlite in this thread returns: rows, fields, counts; object and array rows; the caller's parsers", async () => {
    const insert = `INSERT INTO t (id, name, tags, data, at, raw, big, amount) VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING *`;
    const at = new Date("2026-01-02T03:04:05.678Z");
    const values = [1, "a", ["x", "y"], { k: [1, 2] }, at, new Uint8Array([1, 2, 255]), 9007199254740993n, "12.50"];
    const [onThread, here] = await both((db) => db.query(insert, values));
    expect(onThread).toEqual(here);
    expect(onThread.rows[0]).toMatchObject({ id: 1, tags: ["x", "y"], data: { k: [1, 2] }, at, raw: new Uint8Array([1, 2, 255]) });
    await both((db) => db.query(insert, [2, "b", null, null, null, null, null, null]));
    // Prisma's adapter: array rows, its own parsers for some types (functions, which stay on this side).
    const parsers = { 1184: (text: string) => `tz:${text}`, 20: (text: string) => `big:${text}`, 1700: (text: string) => `num:${text}` };
    for (const rowMode of ["array", "object"] as const) {
      const [a, b] = await both((db) => db.query(`SELECT *, id AS id FROM t ORDER BY id`, [], { rowMode, parsers }));
      expect(a).toEqual(b);
    }
    const [updated, updatedHere] = await both((db) => db.query(`UPDATE t SET name = name || '!' WHERE id > $1`, [0]));
    expect(updated).toEqual(updatedHere);
    expect(updated.affectedRows).toBe(2);
    const [script, scriptHere] = await both((db) => db.exec(`SELECT 1 AS one; SELECT name FROM t ORDER BY id`));
    expect(script).toEqual(scriptHere);
  });

  it("parses every kind of answer as PGlite's own query does, and reads the usual ones itself", async () => {
    await both((db) =>
      db.exec(`CREATE TABLE kinds (id int PRIMARY KEY, b bool, i2 int2, i8 int8, f4 float4, f8 float8, n numeric, t text, v varchar(20),
        c char(3), u uuid, j json, jb jsonb, by bytea, ts timestamp, tz timestamptz, d date, iv interval, ia int[], ta text[], ja jsonb[],
        tza timestamptz[], ba bool[], ua uuid[]);`),
    );
    const row = [
      1,
      true,
      -32768,
      9007199254740993n,
      1.5,
      Number.NaN,
      "123456789012345678901234567890.123",
      "é ☃ 😀  \" ' , {}",
      "vc",
      "ab",
      "0191b3a8-7c3e-7cc4-9b52-2f1f6b8d4a01",
      { a: [1, "x", null] },
      { "": "", n: 1.25, nested: { deep: [true] } },
      new Uint8Array([0, 1, 254, 255]),
      "2026-01-02 03:04:05.678",
      new Date("2026-11-26T22:00:00.123Z"),
      "2026-02-28",
      "1 day 02:03:04",
      [1, null, 3],
      ["a,b", 'q"uote', "NULL", null, "", "back\\slash"],
      [{ x: 1 }, null],
      [new Date("2026-01-01T00:00:00Z"), null],
      [true, false, null],
      ["0191b3a8-7c3e-7cc4-9b52-2f1f6b8d4a01"],
    ];
    const placeholders = row.map((_, i) => `$${i + 1}`).join(", ");
    const cases: Array<[string, unknown[], Parameters<PGlite["query"]>[2]?]> = [
      [`INSERT INTO kinds VALUES (${placeholders}) RETURNING *`, row],
      [`INSERT INTO kinds (id) VALUES ($1), ($2) RETURNING *`, [2, 3]],
      [`INSERT INTO kinds (id, t, f8, f4, i8) VALUES ($1, '', 'Infinity', '-Infinity', -9007199254740993)`, [4]],
      [`SELECT * FROM kinds ORDER BY id`, []],
      [`SELECT * FROM kinds ORDER BY id`, [], { rowMode: "array" }],
      [`SELECT * FROM kinds WHERE id < $1`, [0]],
      [`SELECT * FROM kinds WHERE id < $1`, [0], { rowMode: "array" }],
      [`SELECT id, t AS id, b AS id, 'x' AS "t" FROM kinds ORDER BY 1`, []],
      [`SELECT id, t AS id, b AS id FROM kinds ORDER BY 1`, [], { rowMode: "array" }],
      [`SELECT 1 AS "1", 2 AS "constructor", 3 AS "toString", 'é' AS "ü ☃"`, []],
      [`SELECT NULL AS nothing, ''::text AS empty, ARRAY[[1,2],[3,4]] AS nested, '{}'::int[] AS none, ROW(1, 'a') AS record`, []],
      [`SELECT count(*) FROM kinds`, []],
      [
        `SELECT * FROM kinds ORDER BY id`,
        [],
        {
          rowMode: "array",
          parsers: {
            1184: (text) => `tz:${text}`,
            20: (text) => `big:${text}`,
            1700: (text) => `num:${text}`,
            3802: (text: string, typeId?: number) => `jsonb ${typeId}:${text}`,
            17: (text) => `bytes:${text}`,
            1009: (text) => `texts:${text}`,
          },
        },
      ],
      [`SELECT i8, n, tz FROM kinds ORDER BY id`, [], { parsers: { 20: (text) => BigInt(text) } }],
      [`UPDATE kinds SET t = coalesce(t, '') || '!' WHERE id > $1`, [1]],
      [`UPDATE kinds SET t = t || '?' WHERE id = $1 RETURNING id, t`, [1]],
      [`UPDATE kinds SET t = t WHERE id < $1`, [0]],
      [`DELETE FROM kinds WHERE id = $1 RETURNING id`, [3]],
      [`INSERT INTO kinds (id) SELECT g FROM generate_series(10, 14) AS g`, []],
      [`INSERT INTO kinds (id) VALUES (10) ON CONFLICT (id) DO NOTHING`, []],
      [`MERGE INTO kinds USING (SELECT 11 AS id) AS s ON kinds.id = s.id WHEN MATCHED THEN UPDATE SET t = 'merged'`, []],
      [`CREATE TABLE made (id int)`, []],
      [`DO $$ BEGIN RAISE NOTICE 'noticed'; END $$`, []],
      [`SELECT set_config('application_name', 'x', false) AS setting`, []],
      [`SET application_name = 'y'`, []],
      [``, []],
    ];
    // What the thread decodes itself rather than handing to PGlite's parser.
    const fallbacks = new Set([``]);
    const parsers = databaseParsers(
      (
        await local.query<{ oid: number; typarray: number }>(
          `SELECT b.oid, b.typarray FROM pg_type a JOIN pg_type b ON b.oid = a.typelem WHERE a.typcategory = 'A' GROUP BY b.oid, b.typarray`,
        )
      ).rows,
    );
    for (const [text, params, options] of cases) {
      // The same statement's bytes, from a transaction that is rolled back.
      let bytes: Uint8Array = new Uint8Array();
      await local.transaction(async (tx) => {
        bytes = await tx.queryRaw(text, params);
        await tx.rollback();
      });
      expect({ text, decoded: decodeResult(bytes, { ...parsers, ...options?.parsers }, options?.rowMode) !== undefined }).toEqual({ text, decoded: !fallbacks.has(text) });
      const onThread = await thread.query(text, params, options);
      const reference = (await PGlite.prototype.query.call(local, text, params, options)) as Results;
      // Strict: the same classes and no extra keys; the keys' order too (toEqual does not see it).
      expect({ text, result: onThread }).toStrictEqual({ text, result: reference });
      expect(onThread.rows.map((r) => Object.keys(r as object))).toEqual(reference.rows.map((r) => Object.keys(r as object)));
      expect(Object.keys(onThread)).toEqual(Object.keys(reference));
    }
  });

  it("fails as PGlite does: a DatabaseError with every field PostgreSQL reported, the query and parameters on it", async () => {
    const insert = `INSERT INTO child (id, parent) VALUES ($1, $2)`;
    for (const [text, params] of [
      [insert, [1, 999]],
      [`INSERT INTO t (id, name) VALUES ($1, $2)`, [1, "duplicate"]],
      [`INSERT INTO t (id, name) VALUES ($1, $2)`, [50, null]],
      [`SELEC nonsense`, []],
    ] as const) {
      const [onThread, here] = await both((db) => db.query(text, [...params]).catch((e: unknown) => e));
      expect(onThread).toBeInstanceOf(messages.DatabaseError);
      expect({ ...(onThread as object), message: (onThread as Error).message }).toEqual({ ...(here as object), message: (here as Error).message });
    }
    await expect(
      thread.query(
        `SELECT 1`,
        [{ toString: () => "1" }].map((value) => Object.create(value)),
      ),
    ).rejects.toThrow(TypeError);
  });

  it("gives Prisma's adapter the errors it maps to its codes (a unique violation names its fields)", async () => {
    const adapter = await new PrismaPGlite(thread as unknown as PGlite).connect();
    const query = {
      sql: `INSERT INTO t (id, name) VALUES ($1, $2)`,
      args: [1, "again"],
      argTypes: [
        { scalarType: "int", arity: "scalar" },
        { scalarType: "string", arity: "scalar" },
      ],
    };
    const err = await adapter.executeRaw(query as never).catch((e: unknown) => e);
    expect(err).toMatchObject({ name: "DriverAdapterError", cause: { kind: "UniqueConstraintViolation", constraint: { fields: ["id"] }, originalCode: "23505" } });
  });

  it("runs transactions as PGlite does: commit, roll back on a throw, explicit rollback, nothing else in between", async () => {
    const insert = `INSERT INTO t (id, name) VALUES ($1, $2)`;
    const count = async () => (await thread.query<{ n: number }>(`SELECT count(*)::int AS n FROM t WHERE id BETWEEN 20 AND 29`)).rows[0]!.n;
    let outside: Promise<number> | undefined;
    await thread.transaction(async (tx) => {
      await tx.query(insert, [20, "in"]);
      // A statement from outside waits for the transaction: it sees both rows or none.
      outside = count();
      await tx.query(insert, [21, "in"]);
      expect((await tx.query<{ n: number }>(`SELECT count(*)::int AS n FROM t WHERE id BETWEEN 20 AND 29`)).rows[0]!.n).toBe(2);
    });
    expect(await outside).toBe(2);
    await expect(
      thread.transaction(async (tx) => {
        await tx.query(insert, [22, "rolled back"]);
        await tx.query(insert, [22, "duplicate"]);
      }),
    ).rejects.toMatchObject({ code: "23505", constraint: "t_pkey" });
    await thread.transaction(async (tx) => {
      await tx.query(insert, [23, "explicit"]);
      await tx.rollback();
      expect(tx.closed).toBe(true);
      await expect(tx.query(insert, [24, "after"])).rejects.toThrow("Transaction is closed");
    });
    const failure = new Error("the caller's");
    await expect(thread.transaction(() => Promise.reject(failure))).rejects.toBe(failure);
    expect(await count()).toBe(2);
  });

  it("keeps prepared statements on its side: a repeated text is prepared once", async () => {
    const select = `SELECT name FROM t WHERE id = $1 /* prepared once */`;
    for (let i = 0; i < 3; i++) await thread.query(select, [1]);
    const statements = await thread.query<{ n: number }>(`SELECT count(*)::int AS n FROM pg_prepared_statements WHERE statement = $1`, [select]);
    expect(statements.rows[0]!.n).toBe(1);
  });

  it("loses no write sent before close, and fails every call after it", async () => {
    const own = path.join(dir, "close");
    const db = await PgliteThread.open(own);
    await db.exec(`CREATE TABLE w (id int PRIMARY KEY)`);
    const writes = Array.from({ length: 200 }, (_, i) => db.query(`INSERT INTO w VALUES ($1)`, [i]));
    const closing = db.close();
    await Promise.all(writes);
    await closing;
    await expect(db.query(`SELECT 1`)).rejects.toThrow("PGlite is closed");
    await expect(db.query(`SELECT 1`)).rejects.toMatchObject({ dependency: "database", outcome: "not-written" });
    const again = await PgliteThread.open(own);
    try {
      expect((await again.query<{ n: number }>(`SELECT count(*)::int AS n FROM w`)).rows[0]!.n).toBe(200);
    } finally {
      await again.close();
    }
  });

  it("a thread that ends under a pending write: 503000, in doubt for a write on its own, not written for a read (issue 42)", async () => {
    const db = await PgliteThread.open(path.join(dir, "crash"));
    await db.exec(`CREATE TABLE c (id int)`);
    const write = db.query(`INSERT INTO c SELECT 1 FROM pg_sleep(0.3)`).catch((err: unknown) => err);
    const read = db.query(`SELECT 1 FROM pg_sleep(0.3)`).catch((err: unknown) => err);
    await (db as unknown as { worker: Worker }).worker.terminate();
    expect(await write).toBeInstanceOf(DependencyUnavailableError);
    expect(await write).toMatchObject({ outcome: "in-doubt" });
    expect(await read).toMatchObject({ outcome: "not-written" });
    await expect(db.query(`SELECT 1`)).rejects.toMatchObject({ outcome: "not-written" });
  });

  it.each([
    [{ op: "end", tx: 1, commit: true }, "in-doubt"],
    [{ op: "end", tx: 1, commit: false }, "not-written"],
    [{ op: "query", text: "INSERT INTO c VALUES (1)", params: [], options: {} }, "in-doubt"],
    [{ op: "query", text: "INSERT INTO c VALUES (1)", params: [], options: {}, tx: 1 }, "not-written"],
    [{ op: "query", text: "SELECT 1", params: [], options: {} }, "not-written"],
    [{ op: "exec", text: "UPDATE c SET id = 2" }, "in-doubt"],
    [{ op: "begin" }, "not-written"],
  ] as const)("a thread that ends under %j: %s", (request, outcome) => {
    expect(outcomeIfThreadEnds(request as Parameters<typeof outcomeIfThreadEnds>[0])).toBe(outcome);
  });
});
