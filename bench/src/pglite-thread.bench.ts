// `pnpm bench:pglite-thread`: the embedded database's thread (packages/database's PgliteThread) beside
// PGlite on the calling thread (the peer), on the same statements: how long each query holds the
// database's thread (its event loop's active time: the embedded product's ceiling, see
// docs/performance.md "Fifteenth round") and the process's CPU per query, alternating the two, a few
// repetitions. The statements are a claim's shape (20 rows with a ~600-byte body each, array rows and a
// caller's parser, as Prisma's adapter asks), a 20-row id lookup and a count. It prints figures;
// nothing is asserted. Run it in two worktrees to compare two builds of the thread (A/B).
//
// Settings: BENCH_QUERIES=500 (per repetition and kind), BENCH_REPS=3.
import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { createPglite } from "../../packages/database/src/pglite";
import { PgliteThread } from "../../packages/database/src/pglite-thread/client";
import { runMain } from "./load";

const QUERIES = Number(process.env.BENCH_QUERIES ?? 500);
const REPS = Number(process.env.BENCH_REPS ?? 3);
const ROWS = 4_000;

type Queryable = Pick<PgliteThread, "query" | "exec">;

async function seed(db: Queryable): Promise<string[]> {
  await db.exec(`CREATE TABLE d (id uuid PRIMARY KEY, url text, secret text, payload text, event text, attempt int, ts timestamptz, active boolean)`);
  const ids = Array.from({ length: ROWS }, () => randomUUID());
  const payload = JSON.stringify({
    event: "client.created",
    data: { id: randomUUID(), firstName: "Ada", lastName: "Lovelace", email: "ada@example.com", notes: "x".repeat(400) },
    businessId: randomUUID(),
    timestamp: new Date().toISOString(),
  });
  for (let i = 0; i < ids.length; i += 200) {
    await db.query(`INSERT INTO d SELECT u, 'http://127.0.0.1:9/hook', 'v1:key:iv:ciphertext:tag', $2, 'client.created', 0, now(), true FROM unnest($1::uuid[]) AS u`, [
      ids.slice(i, i + 200),
      payload,
    ]);
  }
  return ids;
}

/** QUERIES rounds of the three statements. */
async function work(db: Queryable, ids: string[], queries: number): Promise<void> {
  const parsers = { 1184: (text: string) => text };
  for (let i = 0; i < queries; i++) {
    const start = (i * 20) % (ROWS - 20);
    const pick = ids.slice(start, start + 20);
    await db.query(`SELECT id, url, secret, payload, event, attempt, ts, active FROM d WHERE id = ANY($1::uuid[])`, [pick], { rowMode: "array", parsers });
    await db.query(`SELECT id FROM d WHERE id = ANY($1::uuid[])`, [pick]);
    await db.query(`SELECT count(*)::int AS n FROM d WHERE attempt > $1`, [1_000_000]);
  }
}

async function main(): Promise<void> {
  const dir = mkdtempSync(path.join(os.tmpdir(), "bench-pglite-thread-"));
  try {
    const thread = await PgliteThread.open(path.join(dir, "thread"));
    const inThread = await createPglite(path.join(dir, "in-thread"));
    const threadIds = await seed(thread);
    const peerIds = await seed(inThread);
    // Warm both (V8's optimisation, PostgreSQL's plans).
    await work(thread, threadIds, 300);
    await work(inThread, peerIds, 300);
    const statements = QUERIES * 3;
    console.log(`node ${process.version}, ${os.cpus().length} cores, ${new Date().toISOString()}; ${statements} statements per measurement`);
    for (let rep = 1; rep <= REPS; rep++) {
      const loop = thread.eventLoopUtilization();
      let cpu = process.cpuUsage();
      let wall = performance.now();
      await work(thread, threadIds, QUERIES);
      const busy = thread.eventLoopUtilization(loop).active;
      const threadCpu = process.cpuUsage(cpu);
      const threadWall = performance.now() - wall;
      cpu = process.cpuUsage();
      wall = performance.now();
      await work(inThread, peerIds, QUERIES);
      const peerCpu = process.cpuUsage(cpu);
      const peerWall = performance.now() - wall;
      const per = (ms: number) => ((ms * 1000) / statements).toFixed(0).padStart(5);
      const cpuMs = (usage: NodeJS.CpuUsage) => (usage.user + usage.system) / 1000;
      console.log(
        `  rep ${rep}: database thread busy ${per(busy)} µs/statement, process CPU ${per(cpuMs(threadCpu))}, wall ${per(threadWall)}` +
          `   | peer (PGlite on this thread): CPU ${per(cpuMs(peerCpu))}, wall ${per(peerWall)}   busy/peer CPU ${(busy / cpuMs(peerCpu)).toFixed(2)}`,
      );
    }
    await thread.close();
    await inThread.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

runMain(main);
