import { PGlite, protocol } from "@electric-sql/pglite";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { createPglite, ensureTemplate } from "./pglite";
import { ExecutionWriter, MAX_PREPARED_STATEMENTS, PreparedPGlite } from "./prepared-pglite";

describe("PreparedPGlite", () => {
  let dir: string;
  let db: PreparedPGlite;

  beforeAll(async () => {
    await ensureTemplate();
    dir = mkdtempSync(path.join(os.tmpdir(), "crm-prepared-"));
    db = (await createPglite(path.join(dir, "pglite"))) as PreparedPGlite;
    await db.exec(`CREATE TABLE t (id int PRIMARY KEY, name text NOT NULL, tags text[], data jsonb, at timestamptz, raw bytea);`);
  }, 60_000);
  afterAll(async () => {
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("is what createPglite opens", () => {
    expect(db).toBeInstanceOf(PreparedPGlite);
    expect(db).toBeInstanceOf(PGlite);
  });

  it("returns what PGlite's own query returns, on first and repeated execution, values serialised by parameter type", async () => {
    const insert = `INSERT INTO t (id, name, tags, data, at, raw) VALUES ($1, $2, $3, $4, $5, $6) RETURNING id, name, tags, data, at, raw`;
    const at = new Date("2026-01-02T03:04:05.678Z");
    const first = await db.query(insert, [1, "a", ["x", "y"], { k: [1, 2] }, at, new Uint8Array([1, 2, 255])]);
    const second = await db.query(insert, [2, "b", null, null, null, null]);
    expect(first.rows).toEqual([{ id: 1, name: "a", tags: ["x", "y"], data: { k: [1, 2] }, at, raw: new Uint8Array([1, 2, 255]) }]);
    expect(second.rows).toEqual([{ id: 2, name: "b", tags: null, data: null, at: null, raw: null }]);
    expect(first.affectedRows).toBe(1);
    const select = `SELECT id, name, data FROM t WHERE id = ANY($1) ORDER BY id`;
    const plain = await PGlite.prototype.query.call(db, select, [[1, 2]], { rowMode: "array" });
    for (let i = 0; i < 3; i++) {
      const prepared = await db.query(select, [[1, 2]], { rowMode: "array" });
      expect(prepared.rows).toEqual(plain.rows);
      expect(prepared.fields).toEqual(plain.fields);
    }
    expect((await db.query(`UPDATE t SET name = name || '!' WHERE id > $1`, [0])).affectedRows).toBe(2);
  });

  it("fails as PGlite does (the database's code, the query on the error), and the statement still works after", async () => {
    const insert = `INSERT INTO t (id, name) VALUES ($1, $2)`;
    await db.query(insert, [10, "x"]);
    const err = await db.query(insert, [10, "x"]).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: "23505", query: insert, params: [10, "x"] });
    await expect(db.query("SELEC nonsense")).rejects.toMatchObject({ code: "42601" });
    await db.query(insert, [11, "y"]);
    expect((await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM t WHERE id >= $1`, [10])).rows).toEqual([{ n: 2 }]);
  });

  it("runs prepared statements inside transactions, which commit and roll back as PGlite's", async () => {
    const insert = `INSERT INTO t (id, name) VALUES ($1, $2)`;
    await db.transaction(async (tx) => {
      await tx.query(insert, [20, "in"]);
      expect((await tx.query<{ name: string }>(`SELECT name FROM t WHERE id = $1`, [20])).rows).toEqual([{ name: "in" }]);
    });
    await expect(
      db.transaction(async (tx) => {
        await tx.query(insert, [21, "rolled back"]);
        await tx.query(insert, [21, "duplicate"]);
      }),
    ).rejects.toMatchObject({ code: "23505" });
    await db.transaction(async (tx) => {
      await tx.query(insert, [22, "explicit"]);
      await tx.rollback();
      await expect(tx.query(insert, [23, "after"])).rejects.toThrow("Transaction is closed");
    });
    expect((await db.query<{ id: number }>(`SELECT id FROM t WHERE id BETWEEN $1 AND $2 ORDER BY id`, [20, 23])).rows).toEqual([{ id: 20 }]);
  });

  it("prepares again when a table under a statement changes shape", async () => {
    const select = `SELECT * FROM t WHERE id = $1`;
    expect(Object.keys((await db.query<object>(select, [1])).rows[0]!)).not.toContain("extra");
    await db.exec(`ALTER TABLE t ADD COLUMN extra text DEFAULT 'e'`);
    expect((await db.query<{ extra: string }>(select, [1])).rows[0]?.extra).toBe("e");
  });

  it(`keeps at most ${MAX_PREPARED_STATEMENTS} statements, closing the least recently used`, async () => {
    for (let i = 0; i < MAX_PREPARED_STATEMENTS + 20; i++) await db.query(`SELECT $1::int + ${i} AS n`, [1]);
    expect(db.preparedCount).toBe(MAX_PREPARED_STATEMENTS);
    const prepared = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM pg_prepared_statements`);
    expect(prepared.rows[0]?.n).toBeLessThanOrEqual(MAX_PREPARED_STATEMENTS + 1);
    // An evicted text is simply prepared again.
    expect((await db.query<{ n: number }>(`SELECT $1::int + 0 AS n`, [1])).rows).toEqual([{ n: 1 }]);
  });
});

describe("ExecutionWriter", () => {
  it("writes the bytes of PGlite's Bind, Execute and Sync, whatever the values' lengths and characters, one execution after another", () => {
    const { serialize } = protocol;
    const writer = new ExecutionWriter();
    const long = "x".repeat(5_000);
    for (const values of [
      [],
      [null],
      ["", null, "1", "é ☃ 😀", '{"a,b",NULL}'],
      [long, "ü".repeat(3_000), null],
      ["y".repeat(70_000)],
      ["short", null],
      Array.from({ length: 300 }, (_, i) => (i % 7 === 0 ? null : String(i))),
    ]) {
      const pglite = [serialize.bind({ statement: "crm_12", values }), serialize.execute({}), serialize.sync()];
      const expected = Buffer.concat(pglite.map((part) => Buffer.from(part)));
      expect(Buffer.from(writer.write("crm_12", values)).equals(expected)).toBe(true);
    }
  });
});
