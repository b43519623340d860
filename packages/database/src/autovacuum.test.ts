import { PGlite } from "@electric-sql/pglite";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { Autovacuum, dueCommands, readThresholds, tableThresholds, type TableCounters, type Thresholds } from "./autovacuum";
import { createPglite, ensureTemplate } from "./pglite";
import { PgliteThread } from "./pglite-thread/client";

// PostgreSQL 18's defaults.
const DEFAULTS: Thresholds = {
  vacuum: { threshold: 50, scaleFactor: 0.2 },
  insert: { threshold: 1000, scaleFactor: 0.2 },
  analyze: { threshold: 50, scaleFactor: 0.1 },
};

describe("dueCommands: PostgreSQL's autovacuum thresholds", () => {
  const table = (counters: Partial<TableCounters>): TableCounters => ({
    table: "s.t",
    reltuples: 1000,
    reloptions: null,
    deadTuples: 0,
    insertedSinceVacuum: 0,
    modifiedSinceAnalyze: 0,
    ...counters,
  });
  it.each([
    ["nothing changed", {}, []],
    ["dead tuples at the threshold (50 + 0.2 x 1000)", { deadTuples: 250 }, []],
    ["dead tuples past it", { deadTuples: 251 }, ["VACUUM"]],
    ["changes past the analyze threshold (50 + 0.1 x 1000)", { modifiedSinceAnalyze: 151 }, ["ANALYZE"]],
    ["both", { deadTuples: 300, modifiedSinceAnalyze: 300 }, ["VACUUM", "ANALYZE"]],
    ["inserts past the insert threshold (1000 + 0.2 x 1000)", { insertedSinceVacuum: 1201 }, ["VACUUM"]],
    ["inserts below it", { insertedSinceVacuum: 1200 }, []],
    ["never vacuumed nor analyzed (reltuples -1) counts as empty", { reltuples: -1, deadTuples: 51, modifiedSinceAnalyze: 51 }, ["VACUUM", "ANALYZE"]],
  ] as const)("%s", (_, counters, expected) => {
    expect(dueCommands(table(counters), DEFAULTS)).toEqual(expected);
  });
  it("inserts never qualify when the insert threshold is -1 (PostgreSQL's off)", () => {
    expect(dueCommands(table({ insertedSinceVacuum: 1e9 }), { ...DEFAULTS, insert: { threshold: -1, scaleFactor: 0.2 } })).toEqual([]);
  });
});

describe("tableThresholds: a table's autovacuum storage parameters over the settings", () => {
  it("keeps the settings for a table without any", () => {
    expect(tableThresholds(null, DEFAULTS)).toBe(DEFAULTS);
    expect(tableThresholds(["fillfactor=70"], DEFAULTS)).toMatchObject(DEFAULTS);
  });
  it("takes each parameter set, the settings for the rest", () => {
    expect(tableThresholds(["fillfactor=70", "autovacuum_analyze_scale_factor=0.5", "autovacuum_vacuum_insert_threshold=-1"], DEFAULTS)).toMatchObject({
      vacuum: DEFAULTS.vacuum,
      insert: { threshold: -1, scaleFactor: 0.2 },
      analyze: { threshold: 50, scaleFactor: 0.5 },
    });
  });
  it.each(["false", "off", "no", "0", "f", "OFF"])("autovacuum_enabled=%s: nothing is ever due", (value) => {
    const thresholds = tableThresholds([`autovacuum_enabled=${value}`], DEFAULTS);
    expect(dueCommands({ table: "s.t", reltuples: 0, reloptions: null, deadTuples: 1e6, insertedSinceVacuum: 1e6, modifiedSinceAnalyze: 1e6 }, thresholds)).toEqual([]);
  });
  it.each(["true", "on", "yes", "1"])("autovacuum_enabled=%s: as without it", (value) => {
    expect(tableThresholds([`autovacuum_enabled=${value}`], DEFAULTS).enabled).toBe(true);
  });
});

describe("Autovacuum on PGlite", () => {
  let dir: string;
  let db: PGlite;

  beforeAll(async () => {
    await ensureTemplate();
    dir = mkdtempSync(path.join(os.tmpdir(), "crm-autovacuum-"));
    db = await createPglite(path.join(dir, "local"));
  }, 60_000);
  afterAll(async () => {
    await db?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const counters = async (table: string) =>
    (
      await db.query<{ dead: number; analyzed: boolean; vacuumed: boolean }>(
        `SELECT n_dead_tup::int AS dead, last_analyze IS NOT NULL AS analyzed, last_vacuum IS NOT NULL AS vacuumed FROM pg_stat_user_tables WHERE relname = $1`,
        [table],
      )
    ).rows[0]!;

  it("reads PostgreSQL's own thresholds, and none when its autovacuum setting is off", async () => {
    expect(await readThresholds(db)).toEqual(DEFAULTS);
    const off = await PGlite.create(path.join(dir, "off"), { startParams: [...PGlite.defaultStartParams, "-c", "autovacuum=off"] });
    try {
      expect(await readThresholds(off)).toBeUndefined();
    } finally {
      await off.close();
    }
  });

  it("vacuums and analyzes the tables past their thresholds, and only those; the counters say so", async () => {
    await db.exec(`CREATE SCHEMA s; CREATE TABLE s."Churned" (id int PRIMARY KEY, v int); CREATE TABLE s.quiet (id int PRIMARY KEY);
      INSERT INTO s."Churned" SELECT g, 0 FROM generate_series(1, 2000) g; INSERT INTO s.quiet VALUES (1);`);
    const autovacuum = await Autovacuum.start(db, 3_600_000);
    // The first pass settles what the setup left (the inserts, the catalogs' changes).
    await autovacuum.runPass();
    expect(await counters("Churned")).toMatchObject({ analyzed: true });
    await db.exec(`UPDATE s."Churned" SET v = v + 1; SELECT pg_stat_force_next_flush()`);
    expect((await counters("Churned")).dead).toBeGreaterThan(1000);
    const ran = await autovacuum.runPass();
    expect(ran.map(({ table, command }) => `${command} ${table}`)).toEqual([`VACUUM s."Churned"`, `ANALYZE s."Churned"`]);
    expect(await counters("Churned")).toMatchObject({ dead: 0, vacuumed: true });
    expect(await autovacuum.runPass()).toEqual([]);
    await autovacuum.stop();
  });

  it("goes by a table's own autovacuum storage parameters", async () => {
    await db.exec(`CREATE TABLE s.own (id int PRIMARY KEY, v int) WITH (autovacuum_analyze_scale_factor = 0.5, autovacuum_vacuum_scale_factor = 0.5);
      CREATE TABLE s.off (id int PRIMARY KEY, v int) WITH (autovacuum_enabled = off);
      INSERT INTO s.own SELECT g, 0 FROM generate_series(1, 2000) g; INSERT INTO s.off SELECT g, 0 FROM generate_series(1, 2000) g;`);
    const autovacuum = await Autovacuum.start(db, 3_600_000);
    await autovacuum.runPass();
    expect(await counters("own")).toMatchObject({ analyzed: true });
    expect(await counters("off")).toMatchObject({ analyzed: false, vacuumed: false });
    // 800 of 2,000 changed: past the settings' thresholds (250 dead, 250 changes), not the table's (1,050).
    await db.exec(`UPDATE s.own SET v = 1 WHERE id <= 800; SELECT pg_stat_force_next_flush()`);
    expect(await autovacuum.runPass()).toEqual([]);
    await autovacuum.stop();
  });

  it("checks on its interval only after the database was used, and never after stop", async () => {
    await db.exec(`CREATE TABLE s.timed (id int PRIMARY KEY, v int); INSERT INTO s.timed SELECT g, 0 FROM generate_series(1, 500) g`);
    const autovacuum = await Autovacuum.start(db, 20);
    const runPass = jest.spyOn(autovacuum, "runPass");
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(runPass).not.toHaveBeenCalled();
    autovacuum.noteUse();
    await waitFor(async () => (await counters("timed")).analyzed);
    expect(runPass).toHaveBeenCalledTimes(1);
    await autovacuum.stop();
    autovacuum.noteUse();
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(runPass).toHaveBeenCalledTimes(1);
  });

  it("lets statements sent during a pass run between its statements, in their order", async () => {
    await db.exec(`CREATE TABLE s.a (id int PRIMARY KEY, v int); CREATE TABLE s.b (id int PRIMARY KEY, v int); CREATE TABLE s.log (n int);
      INSERT INTO s.a SELECT g, 0 FROM generate_series(1, 20000) g; INSERT INTO s.b SELECT g, 0 FROM generate_series(1, 20000) g;
      UPDATE s.a SET v = 1; UPDATE s.b SET v = 1;`);
    const autovacuum = await Autovacuum.start(db, 3_600_000);
    const order: string[] = [];
    const pass = autovacuum.runPass().then((ran) => {
      order.push("pass");
      return ran;
    });
    const writes = Array.from({ length: 50 }, (_, n) => db.query(`INSERT INTO s.log VALUES ($1)`, [n]).then(() => order.push(`write ${n}`)));
    const [ran] = await Promise.all([pass, ...writes]);
    expect(ran.map(({ table, command }) => `${command} ${table}`)).toEqual(expect.arrayContaining(["VACUUM s.a", "VACUUM s.b"]));
    // All of them ran before the pass's last statement, in the order they were sent.
    expect(order).toEqual([...Array.from({ length: 50 }, (_, n) => `write ${n}`), "pass"]);
    await autovacuum.stop();
  });
});

describe("Autovacuum on PGlite's thread", () => {
  const MAINTENANCE_INTERVAL_MS = 50;
  let dir: string;

  beforeAll(async () => {
    await ensureTemplate();
    dir = mkdtempSync(path.join(os.tmpdir(), "crm-autovacuum-thread-"));
  }, 60_000);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("vacuums a table updated past its threshold with nothing but use, and closes mid-pass losing no write", async () => {
    const own = path.join(dir, "thread");
    const db = await PgliteThread.open(own, { maintenanceIntervalMs: MAINTENANCE_INTERVAL_MS });
    const dead = async (on: PgliteThread) =>
      (
        await on.query<{ dead: number; vacuumed: boolean }>(
          `SELECT n_dead_tup::int AS dead, last_vacuum IS NOT NULL AS vacuumed FROM pg_stat_user_tables WHERE relname = 'churned'`,
        )
      ).rows[0]!;
    // v indexed: no update is HOT, so pruning does not reclaim what VACUUM should.
    await db.exec(`CREATE TABLE churned (id int PRIMARY KEY, v int); CREATE INDEX ON churned (v); CREATE TABLE w (id int PRIMARY KEY);
      INSERT INTO churned SELECT g, 0 FROM generate_series(1, 20000) g`);
    await waitFor(async () => (await dead(db)).vacuumed);
    for (let round = 0; round < 5; round++) await db.exec(`UPDATE churned SET v = v + 1`);
    await waitFor(async () => (await dead(db)).dead === 0);

    // Bloat it again inside a transaction held open for several check intervals: a pass starts and
    // waits for it (none runs inside a transaction). Close is sent meanwhile, with writes before it; then
    // the transaction ends. It commits, the pass stops, and every write lands.
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const held = db.transaction(async (tx) => {
      for (let round = 0; round < 5; round++) await tx.query(`UPDATE churned SET v = v + 1`);
      await tx.query(`INSERT INTO w VALUES ($1)`, [-1]);
      await released;
    });
    // Three check intervals: the thread's timer is the only clock a pass starts by.
    await new Promise((resolve) => setTimeout(resolve, 3 * MAINTENANCE_INTERVAL_MS));
    const writes = Array.from({ length: 200 }, (_, i) => db.query(`INSERT INTO w VALUES ($1)`, [i]));
    const closing = db.close();
    release();
    await held;
    await Promise.all(writes);
    await closing;
    const again = await PgliteThread.open(own);
    try {
      expect((await again.query<{ n: number }>(`SELECT count(*)::int AS n FROM w`)).rows[0]!.n).toBe(201);
    } finally {
      await again.close();
    }
  });
});

async function waitFor(condition: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error("timed out");
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
