import { messages, type PGlite } from "@electric-sql/pglite";
import { PrismaPGlite } from "pglite-prisma-adapter";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { createPglite, ensureTemplate } from "../pglite";
import { PgliteThread } from "./client";

const SCHEMA = `CREATE TABLE t (id int PRIMARY KEY, name text NOT NULL, tags text[], data jsonb, at timestamptz, raw bytea, big int8, amount numeric(12,2));
  CREATE TABLE child (id int PRIMARY KEY, parent int NOT NULL REFERENCES t(id));`;

describe("PGlite on its own thread", () => {
  let dir: string;
  let thread: PgliteThread;
  let local: PGlite;

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
    const again = await PgliteThread.open(own);
    try {
      expect((await again.query<{ n: number }>(`SELECT count(*)::int AS n FROM w`)).rows[0]!.n).toBe(200);
    } finally {
      await again.close();
    }
  });
});
