// `pnpm bench:footprint` (issue 13): how fast the product is up and how much memory its processes
// hold, idle and under a short list load, beside a bare Express 5 process, alternating, in one run.
//
// Every product process is started as users start it: the compiled output (`pnpm build`, brought up
// to date first) with the same command the start scripts end in: plain `node` (embedded), and
// `scripts/start-service.sh` for each distributed service (node with that service's runtime flags).
// - embedded, first start: `infra/standalone/dist/start.js` on an empty DATA_DIR (migrations included);
// - embedded, later start: the same again on that DATA_DIR;
// - distributed: identity, crm-records, webhook-delivery (each on its own PostgreSQL database,
//   migrated with db:deploy first, Redis and Kafka up), then the gateway: one process each;
// - peer: `footprint-peer.cjs`, Express 5 answering a fixed 20-row list.
// Ready = from spawn to the first 200 on GET /api/v1/capabilities (embedded) or GET /readyz
// (each distributed process). CPU = the process's user+system time when it became ready: the figure
// that does not depend on what else the machine is running. RSS = VmRSS of every process the product
// runs (its process tree), idle BENCH_IDLE_S after all are ready, and the highest sample while
// autocannon lists 20 clients through the gateway for BENCH_LOAD_S with BENCH_CONNECTIONS connections.
// Idle is read after V8's memory reducer has run: it frees start-up's garbage about 8 s after a
// process stops allocating, and before it the gateway alone holds ~10 MB more (80 MB, then 69-70:
// sampled each second on 2026-11-29). BENCH_IDLE_S=3 reads the start-up state, as this bench did
// until then.
//
// Settings (environment): BENCH_ROUNDS=2  BENCH_IDLE_S=12  BENCH_LOAD_S=5  BENCH_CONNECTIONS=10
// BENCH_MODES=embedded,distributed  BENCH_NODE_OPTIONS (passed to every measured process). It prints figures; nothing is asserted. Figures: docs/performance.md.
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { createTestDatabase, freePort, startInfra, testInfra } from "@crm/testing";
import { serviceCommand } from "../../e2e/harness";
import { median, runLoad } from "./load";

const ROOT = path.resolve(__dirname, "../..");
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const IDLE_S = Number(process.env.BENCH_IDLE_S ?? 12);
const LOAD_S = Number(process.env.BENCH_LOAD_S ?? 5);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10);
const MODES = (process.env.BENCH_MODES ?? "embedded,distributed").split(",");
const LIST = "/api/v1/client?perPage=20";
const PAGE_SIZE = 20;

interface Sample {
  readyMs: number;
  cpuMs: number;
  idleMb: number;
  loadMb: number;
  processes: number;
}
type Figures = Map<string, Sample[]>;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function procStat(pid: number): { ppid: number; cpuMs: number } | undefined {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
    const ticks = 100; // USER_HZ on Linux
    return { ppid: Number(fields[1]), cpuMs: ((Number(fields[11]) + Number(fields[12])) * 1000) / ticks };
  } catch {
    return undefined;
  }
}

/** The process and all its descendants. */
function processTree(root: number): number[] {
  const parents = new Map<number, number>();
  for (const entry of readdirSync("/proc")) {
    const pid = Number(entry);
    if (!Number.isInteger(pid)) continue;
    const stat = procStat(pid);
    if (stat) parents.set(pid, stat.ppid);
  }
  const tree = [root];
  for (let i = 0; i < tree.length; i++) for (const [pid, ppid] of parents) if (ppid === tree[i]) tree.push(pid);
  return tree;
}

function rssMb(pid: number): number {
  try {
    return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))![1]) / 1024;
  } catch {
    return 0;
  }
}

const treeRssMb = (root: number) => processTree(root).reduce((sum, pid) => sum + rssMb(pid), 0);

interface Started {
  name: string;
  child: ChildProcess;
  readyMs: number;
  cpuMs: number;
  logs: string[];
}

function baseEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const { PATH, HOME, LANG } = process.env;
  const nodeOptions: Record<string, string> = process.env.BENCH_NODE_OPTIONS ? { NODE_OPTIONS: process.env.BENCH_NODE_OPTIONS } : {};
  if (process.env.MALLOC_ARENA_MAX) nodeOptions.MALLOC_ARENA_MAX = process.env.MALLOC_ARENA_MAX;
  return { PATH, HOME, LANG, NODE_ENV: "production", LOG_LEVEL: "warn", RATE_LIMIT_MAX: "1000000000", ...nodeOptions, ...extra };
}

/** Spawns `node <script>` (or `[command, args]`) and waits for `readyUrl` to answer 200. */
async function startProcess(name: string, script: string | [string, string[]], env: NodeJS.ProcessEnv, readyUrl: string): Promise<Started> {
  const logs: string[] = [];
  const t0 = performance.now();
  const [command, args] = typeof script === "string" ? [process.execPath, [script]] : script;
  const child = spawn(command, args, { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"] });
  child.stdout!.on("data", (c: Buffer) => logs.push(c.toString()));
  child.stderr!.on("data", (c: Buffer) => logs.push(c.toString()));
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${name} exited with ${child.exitCode}:\n${logs.join("")}`);
    const res = await fetch(readyUrl).catch(() => undefined);
    if (res?.status === 200) break;
    if (performance.now() - t0 > 120_000) throw new Error(`${name} not ready after 120 s:\n${logs.join("")}`);
    await sleep(20);
  }
  return { name, child, readyMs: performance.now() - t0, cpuMs: procStat(child.pid!)?.cpuMs ?? 0, logs };
}

async function stop(started: Started[]): Promise<void> {
  for (const { child } of [...started].reverse()) {
    if (child.exitCode !== null) continue;
    const exited = new Promise((resolve) => child.once("exit", resolve));
    child.kill("SIGTERM");
    const timer = setTimeout(() => child.kill("SIGKILL"), 15_000);
    await exited;
    clearTimeout(timer);
  }
}

async function signUpAndSeed(baseUrl: string): Promise<Record<string, string>> {
  const res = await fetch(`${baseUrl}/api/v1/auth/sign-up`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ businessName: "Footprint", email: `fp-${randomBytes(4).toString("hex")}@example.test`, password: "correct-horse-battery" }),
  });
  if (res.status !== 201) throw new Error(`sign-up failed: ${res.status} ${await res.text()}`);
  const { data } = (await res.json()) as { data: { accessToken: string } };
  const headers = { authorization: `Bearer ${data.accessToken}`, "content-type": "application/json" };
  for (let i = 0; i < PAGE_SIZE; i++) {
    const created = await fetch(`${baseUrl}/api/v1/client`, {
      method: "POST",
      headers,
      body: JSON.stringify({ firstName: "Grace", lastName: `Hopper ${i}`, email: `grace${i}@example.test` }),
    });
    if (created.status !== 201) throw new Error(`create failed: ${created.status} ${await created.text()}`);
  }
  return headers;
}

/** Idle RSS of each process, BENCH_IDLE_S after all are ready and before any request. */
async function idleRss(started: Started[]): Promise<number[]> {
  await sleep(IDLE_S * 1000);
  return started.map((s) => treeRssMb(s.child.pid!));
}

/** The highest RSS of each process while the list is loaded through `baseUrl`; then the figures. */
async function measure(started: Started[], idle: number[], baseUrl: string, headers: Record<string, string>, figures: Figures, prefix: string): Promise<void> {
  const peak = started.map(() => 0);
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      started.forEach((s, i) => (peak[i] = Math.max(peak[i]!, treeRssMb(s.child.pid!))));
      await sleep(100);
    }
  })();
  const load = await runLoad({ url: `${baseUrl}${LIST}`, headers, connections: CONNECTIONS, durationS: LOAD_S });
  sampling = false;
  await sampler;
  if (load.failures) console.log(`  ! ${prefix}: ${load.failures} failed requests under load`);
  started.forEach((s, i) => {
    const key = `${prefix}${s.name}`;
    const list = figures.get(key) ?? [];
    list.push({ readyMs: s.readyMs, cpuMs: s.cpuMs, idleMb: idle[i]!, loadMb: peak[i]!, processes: processTree(s.child.pid!).length });
    figures.set(key, list);
  });
  const total = { readyMs: 0, cpuMs: 0, idleMb: idle.reduce((a, b) => a + b, 0), loadMb: peak.reduce((a, b) => a + b, 0), processes: 0 };
  if (started.length > 1) {
    total.processes = started.reduce((n, s) => n + processTree(s.child.pid!).length, 0);
    const list = figures.get(`${prefix}(all)`) ?? [];
    list.push(total);
    figures.set(`${prefix}(all)`, list);
  }
  console.log(`  ${prefix.padEnd(14)} ${load.rps.toFixed(0)} req/s while measuring`);
}

async function peer(figures: Figures): Promise<void> {
  const port = await freePort();
  const started = await startProcess("express", path.join(__dirname, "footprint-peer.cjs"), baseEnv({ PORT: String(port) }), `http://127.0.0.1:${port}/healthz`);
  try {
    await measure([started], await idleRss([started]), `http://127.0.0.1:${port}`, {}, figures, "peer ");
  } finally {
    await stop([started]);
  }
}

async function embedded(figures: Figures): Promise<void> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), "crm-footprint-"));
  try {
    for (const start of ["first", "later"] as const) {
      const port = await freePort();
      const started = await startProcess(
        "standalone",
        "infra/standalone/dist/start.js",
        baseEnv({ PORT: String(port), DATA_DIR: dataDir }),
        `http://127.0.0.1:${port}/api/v1/capabilities`,
      );
      try {
        const idle = await idleRss([started]);
        const headers = await signUpAndSeed(`http://127.0.0.1:${port}`);
        await measure([started], idle, `http://127.0.0.1:${port}`, headers, figures, `embedded ${start} `);
      } finally {
        await stop([started]);
      }
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

const SERVICES = [
  { name: "identity", schema: "identity", urlVar: "IDENTITY_URL" },
  { name: "crm-records", schema: "records", urlVar: "CRM_RECORDS_URL" },
  { name: "webhook-delivery", schema: "webhooks", urlVar: "WEBHOOK_DELIVERY_URL" },
] as const;

async function distributed(figures: Figures): Promise<void> {
  const shared = {
    REDIS_URL: testInfra.redisUrl!,
    KAFKA_BROKERS: testInfra.kafkaBrokers!,
    JWT_SECRET: randomBytes(32).toString("hex"),
    INTERNAL_TOKEN_SECRET: randomBytes(32).toString("hex"),
    IDEMPOTENCY_ENCRYPTION_KEY: randomBytes(32).toString("hex"),
    DATA_DIR: mkdtempSync(path.join(os.tmpdir(), "crm-footprint-dist-")),
  };
  const started: Started[] = [];
  const databases: Array<{ drop: () => Promise<void> }> = [];
  const urls: Record<string, string> = {};
  try {
    for (const service of SERVICES) {
      const db = await createTestDatabase(`crm_fp_${service.schema}`);
      databases.push(db);
      const deploy = spawnSync(process.execPath, ["../../packages/database/dist/cli/deploy.js", service.schema, "prisma/migrations"], {
        cwd: path.join(ROOT, "services", service.name),
        env: baseEnv({ DATABASE_URL: db.url }),
        encoding: "utf8",
      });
      if (deploy.status !== 0) throw new Error(`db:deploy ${service.name} failed:\n${deploy.stdout}${deploy.stderr}`);
      const port = await freePort();
      urls[service.urlVar] = `http://127.0.0.1:${port}`;
      const env = baseEnv({ ...shared, DATABASE_URL: db.url, PORT: String(port), HOST: "127.0.0.1" });
      started.push(await startProcess(service.name, serviceCommand(`services/${service.name}`), env, `http://127.0.0.1:${port}/readyz`));
    }
    const port = await freePort();
    const env = baseEnv({ ...shared, ...urls, PORT: String(port), HOST: "127.0.0.1" });
    started.push(await startProcess("gateway", serviceCommand("services/gateway"), env, `http://127.0.0.1:${port}/readyz`));
    const idle = await idleRss(started);
    const headers = await signUpAndSeed(`http://127.0.0.1:${port}`);
    await measure(started, idle, `http://127.0.0.1:${port}`, headers, figures, "distributed ");
  } finally {
    await stop(started);
    for (const db of databases) await db.drop().catch(() => undefined);
    rmSync(shared.DATA_DIR, { recursive: true, force: true });
  }
}

function report(figures: Figures): void {
  const peerIdle = median((figures.get("peer express") ?? []).map((s) => s.idleMb));
  const peerReady = median((figures.get("peer express") ?? []).map((s) => s.readyMs));
  const fmt = (n: number, digits = 0) => n.toFixed(digits).padStart(7);
  console.log(`\nmedians of ${ROUNDS} round(s); ratios against the bare Express 5 peer`);
  console.log(
    `${"process".padEnd(32)}${"ready ms".padStart(9)}${"cpu ms".padStart(8)}${"idle MB".padStart(9)}${"load MB".padStart(9)}${"procs".padStart(6)}${"ready x".padStart(9)}${"idle x".padStart(8)}`,
  );
  for (const [key, samples] of figures) {
    const m = (pick: (s: Sample) => number) => median(samples.map(pick));
    const ready = m((s) => s.readyMs);
    console.log(
      `${key.padEnd(32)}${ready ? fmt(ready) : "      -"}  ${ready ? fmt(m((s) => s.cpuMs)) : "      -"}${fmt(m((s) => s.idleMb))}  ${fmt(m((s) => s.loadMb))}${String(m((s) => s.processes)).padStart(6)}` +
        `${ready && peerReady ? (ready / peerReady).toFixed(1).padStart(9) : "        -"}${peerIdle ? (m((s) => s.idleMb) / peerIdle).toFixed(1).padStart(8) : ""}`,
    );
  }
}

async function main(): Promise<void> {
  const build = spawnSync(process.execPath, ["scripts/build.mjs", "--if-stale"], { cwd: ROOT, stdio: "inherit" });
  if (build.status !== 0) throw new Error("pnpm build failed");
  const infra = MODES.includes("distributed") ? await startInfra((line) => console.log(line)) : undefined;
  if (infra) {
    if (!infra.databaseUrl || !infra.redisUrl || !infra.kafkaBrokers) throw new Error("distributed mode needs PostgreSQL, Redis and Kafka (or kcat)");
    Object.assign(testInfra, { databaseUrl: infra.databaseUrl, redisUrl: infra.redisUrl, kafkaBrokers: infra.kafkaBrokers });
  }
  console.log(
    `footprint: ${os.cpus().length} × ${os.cpus()[0]?.model}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, node ${process.version}, load ${os.loadavg()[0]!.toFixed(1)}, ${new Date().toISOString()}`,
  );
  const figures: Figures = new Map();
  try {
    for (let round = 1; round <= ROUNDS; round++) {
      console.log(`round ${round}/${ROUNDS}`);
      await peer(figures);
      if (MODES.includes("embedded")) await embedded(figures);
      if (MODES.includes("distributed")) await distributed(figures);
    }
  } finally {
    await infra?.stop();
  }
  report(figures);
  console.log(`load average at the end: ${os.loadavg()[0]!.toFixed(1)}`);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
