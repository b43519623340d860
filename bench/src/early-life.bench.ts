// `pnpm bench:early-life` (issue 9, helps issue 15): the CPU per request of each distributed process
// over its first minute and a half. A fresh product (as bench:records starts it) takes a FIXED rate
// of requests through the gateway from ready (`POST /client` and the default list of 1,000 clients,
// alternating), and every BENCH_WINDOW_S seconds the bench prints each process's CPU per request
// (/proc/<pid>/stat, all threads; and, for the gateway and crm-records, the main thread apart from
// V8's and libuv's helper threads) and p50/p99 of each kind (ms from when a request was due).
// At a fixed rate the CPU per request is the figure: throughput would only show the machine's load.
//
// Settings: BENCH_RATE=200 (requests a second in all; 300 saturated the shared 2-core machine in the
// first seconds), BENCH_KINDS=create,list, BENCH_DURATION_S=90, BENCH_WINDOW_S=5, BENCH_IDLE_S=0 (idle
// after ready before the first request), BENCH_RUNS=1 (runs per variant), BENCH_VARIANTS: variants
// separated by `;`, each `name:VAR=value VAR=value` (the environment of every product process, e.g.
// `base:;arena16:MALLOC_ARENA_MAX=16`), run alternately, each on a fresh product; default one variant
// with nothing set. BENCH_CPU_PROF=<dir> as in the other benches (window boundaries are printed in
// V8's profile clock, so a profile can be cut by window).
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { Client } from "pg";
import { startInfra, testInfra } from "@crm/testing";
import { startDistributed } from "../../e2e/harness";
import { probeSettings } from "./bench-product";
import { pidListeningOn, runMain } from "./load";
import { signUp } from "./records-caller";
import { seedClients } from "./records-seed";

const RATE = Number(process.env.BENCH_RATE ?? 200);
const KINDS = (process.env.BENCH_KINDS ?? "create,list").split(",") as Array<"create" | "list">;
const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 90);
const WINDOW_S = Number(process.env.BENCH_WINDOW_S ?? 5);
const RUNS = Number(process.env.BENCH_RUNS ?? 1);
const IDLE_S = Number(process.env.BENCH_IDLE_S ?? 0);
const CONNECTIONS = 30;
const LIST = "/api/v1/client?perPage=20&include=-contacts";
const NEW_CLIENT = JSON.stringify({ firstName: "Grace", lastName: "Hopper", email: "grace@example.test", companyName: "Navy" });
const TICK_MS = 10; // /proc counts clock ticks: USER_HZ is 100 on Linux

interface Variant {
  name: string;
  env: Record<string, string>;
}

function variants(): Variant[] {
  const spec = process.env.BENCH_VARIANTS;
  if (!spec) return [{ name: "default", env: {} }];
  return spec
    .split(";")
    .filter((v) => v.trim())
    .map((v) => {
      const [name, rest = ""] = v.split(/:(.*)/s);
      const env: Record<string, string> = {};
      for (const pair of rest.trim().split(/\s+(?=[A-Z_]+=)/)) {
        if (!pair) continue;
        const eq = pair.indexOf("=");
        env[pair.slice(0, eq)] = pair.slice(eq + 1);
      }
      return { name: name!.trim(), env };
    });
}

/**
 * CPU (ms) of a process and of its main thread (tid = pid); the rest is V8's helper threads (concurrent
 * compilation, GC) and libuv's pool, which all name themselves "node".
 */
function threadCpu(pid: number): { total: number; main: number } {
  const ticks = (stat: string) => {
    const fields = stat.slice(stat.lastIndexOf(") ") + 2).split(" ");
    return (Number(fields[11]) + Number(fields[12])) * TICK_MS;
  };
  // The process's own figure counts its threads that ended too.
  return { total: ticks(readFileSync(`/proc/${pid}/stat`, "utf8")), main: ticks(readFileSync(`/proc/${pid}/task/${pid}/stat`, "utf8")) };
}

/** Seconds since a process started. */
function ageS(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
  const uptime = Number(readFileSync("/proc/uptime", "utf8").split(" ")[0]);
  return uptime - Number(fields[19]) / 100;
}

/** Context switches (voluntary + involuntary) of a process's main thread. */
function mainSwitches(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const v = Number(/voluntary_ctxt_switches:\s+(\d+)/.exec(status)?.[1] ?? 0);
  const n = Number(/nonvoluntary_ctxt_switches:\s+(\d+)/.exec(status)?.[1] ?? 0);
  return v + n;
}

const quantile = (sorted: readonly number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
const monotonicUs = () => Number(process.hrtime.bigint() / 1000n);

async function oneRun(variant: Variant, run: number): Promise<string[]> {
  const product = await startDistributed({ RATE_LIMIT_MAX: "1000000000", LOG_LEVEL: "warn", ...probeSettings(), ...variant.env });
  const records = product.services["crm-records"];
  const db = new Client({ connectionString: records.databaseUrl });
  const { Pool } = await import("undici");
  const pool = new Pool(product.baseUrl, { connections: CONNECTIONS, pipelining: 1 });
  const lines: string[] = [];
  try {
    const procs = new Map<string, number>([
      ["gateway", pidListeningOn(Number(new URL(product.baseUrl).port))],
      ["crm-records", pidListeningOn(Number(new URL(records.url).port))],
      ["identity", pidListeningOn(Number(new URL(product.services.identity.url).port))],
      ["webhook-delivery", pidListeningOn(Number(new URL(product.services["webhook-delivery"].url).port))],
    ]);
    await db.connect();
    const caller = await signUp(product.baseUrl, `early-${run}`, product.internalTokenSecret);
    await seedClients(db, caller.businessId, 1000);
    await db.query(`ANALYZE "records"."Client"`);
    // BENCH_IDLE_S: the product idle that long after ready (and the seed) before the first request.
    if (IDLE_S) await new Promise((r) => setTimeout(r, IDLE_S * 1000));
    const rssMb = (pid: number) => Math.round(Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? 0) / 1024);
    const ages = [...procs].map(([name, pid]) => `${name} ${ageS(pid).toFixed(1)} s ${rssMb(pid)} MB`).join(", ");
    lines.push(
      `\n${variant.name} run ${run + 1}: ${JSON.stringify(variant.env)}; ${RATE}/s of ${KINDS.join("+")} through the gateway for ${DURATION_S} s; load average ${os.loadavg()[0]!.toFixed(1)}, ${new Date().toISOString()}`,
    );
    lines.push(`age and RSS at the first request: ${ages}`);

    const windows = Math.ceil(DURATION_S / WINDOW_S);
    const latencies = Array.from({ length: windows }, () => new Map(KINDS.map((k) => [k, [] as number[]])));
    const failures = new Array<number>(windows).fill(0);
    const samples: Array<{ at: number; us: number; cpu: Map<string, ReturnType<typeof threadCpu>>; switches: Map<string, number> }> = [];
    const sample = () =>
      samples.push({
        at: performance.now(),
        us: monotonicUs(),
        cpu: new Map([...procs].map(([name, pid]) => [name, threadCpu(pid)])),
        switches: new Map([...procs].map(([name, pid]) => [name, mainSwitches(pid)])),
      });
    const total = Math.round(RATE * DURATION_S);
    const intervalMs = 1000 / RATE;
    const inFlight: Array<Promise<void>> = [];
    sample();
    const start = samples[0]!.at;
    let sent = 0;
    let nextBoundary = 1;
    const one = async (i: number, due: number): Promise<void> => {
      const kind = KINDS[i % KINDS.length]!;
      const w = Math.min(windows - 1, Math.floor((due - start) / 1000 / WINDOW_S));
      try {
        const res = await pool.request(
          kind === "create"
            ? { method: "POST", path: "/api/v1/client", headers: caller.headers.gateway, body: NEW_CLIENT }
            : { method: "GET", path: LIST, headers: caller.headers.gateway },
        );
        await res.body.dump();
        if (res.statusCode >= 200 && res.statusCode < 300) latencies[w]!.get(kind)!.push(performance.now() - due);
        else failures[w]!++;
      } catch {
        failures[w]!++;
      }
    };
    while (sent < total) {
      const now = performance.now();
      while (nextBoundary <= windows && now >= start + nextBoundary * WINDOW_S * 1000) {
        sample();
        nextBoundary++;
      }
      while (sent < total && start + sent * intervalMs <= now) {
        inFlight.push(one(sent, start + sent * intervalMs));
        sent++;
      }
      await new Promise((r) => setTimeout(r, Math.max(0, start + sent * intervalMs - performance.now())));
    }
    await Promise.all(inFlight);
    while (samples.length <= windows) sample();

    const head = ["win", "t s", "req", ...[...procs.keys()].map((n) => `${n} ms/req`), "gw main/helpers", "rec main/helpers", "gw cs/req", "rec cs/req"];
    for (const k of KINDS) head.push(`${k} p50/p99 ms`);
    lines.push(head.join("\t"));
    for (let w = 0; w < windows; w++) {
      const a = samples[w]!;
      const b = samples[w + 1]!;
      const n = KINDS.reduce((s, k) => s + latencies[w]!.get(k)!.length, 0) + failures[w]!;
      const per = (name: string) => (b.cpu.get(name)!.total - a.cpu.get(name)!.total) / n;
      const split = (name: string) => {
        const main = (b.cpu.get(name)!.main - a.cpu.get(name)!.main) / n;
        return `${main.toFixed(3)}/${(per(name) - main).toFixed(3)}`;
      };
      const cs = (name: string) => ((b.switches.get(name)! - a.switches.get(name)!) / n).toFixed(2);
      const row = [
        String(w + 1),
        `${((a.at - start) / 1000).toFixed(0)}`,
        String(n),
        ...[...procs.keys()].map((p) => per(p).toFixed(3)),
        split("gateway"),
        split("crm-records"),
        cs("gateway"),
        cs("crm-records"),
      ];
      for (const k of KINDS) {
        const l = latencies[w]!.get(k)!.sort((x, y) => x - y);
        row.push(`${quantile(l, 0.5).toFixed(1)}/${quantile(l, 0.99).toFixed(1)}`);
      }
      if (failures[w]) row.push(`FAILURES ${failures[w]}`);
      lines.push(row.join("\t"));
    }
    // The curve in three parts: the first 15 s, 15-40 s, the last 20 s (CPU over requests in each).
    const span = (from: number, to: number, name: string) => {
      const a = samples[Math.max(0, Math.min(windows, from))]!;
      const b = samples[Math.max(0, Math.min(windows, to))]!;
      let n = 0;
      for (let w = from; w < to; w++) n += KINDS.reduce((s, k) => s + latencies[w]!.get(k)!.length, 0) + failures[w]!;
      return ((b.cpu.get(name)!.total - a.cpu.get(name)!.total) / n).toFixed(3);
    };
    const early = Math.round(15 / WINDOW_S);
    const middle = Math.round(40 / WINDOW_S);
    const late = Math.max(middle, windows - Math.round(20 / WINDOW_S));
    lines.push(
      `${variant.name} run ${run + 1}, CPU ms/request in 0-15 s / 15-40 s / last 20 s: ${[...procs.keys()]
        .map((name) => `${name} ${span(0, early, name)} / ${span(early, middle, name)} / ${span(late, windows, name)}`)
        .join("; ")}`,
    );
    lines.push(`window boundaries (V8 profile clock, µs): ${samples.map((s) => s.us).join(",")}`);
    for (const line of lines) console.log(line);
    return lines;
  } finally {
    await pool.close().catch(() => undefined);
    await db.end().catch(() => undefined);
    await product.stop().catch((err) => console.error(String(err)));
  }
}

async function main(): Promise<void> {
  const build = spawnSync(process.execPath, [path.resolve(__dirname, "../../scripts/build.mjs"), "--if-stale"], { stdio: "inherit" });
  if (build.status !== 0) throw new Error("pnpm build failed");
  const infra = await startInfra((line) => console.log(line));
  if (!infra.databaseUrl || !infra.redisUrl || !infra.kafkaBrokers) throw new Error("the benchmark needs PostgreSQL, Redis and Kafka (or kcat)");
  Object.assign(testInfra, { databaseUrl: infra.databaseUrl, redisUrl: infra.redisUrl, kafkaBrokers: infra.kafkaBrokers });
  const all: string[] = [];
  try {
    for (let run = 0; run < RUNS; run++) {
      const vs = variants();
      // Alternate which variant goes first, so neither always follows the other.
      const order = run % 2 ? [...vs].reverse() : vs;
      for (const v of order) all.push(...(await oneRun(v, run)));
    }
  } finally {
    await infra.stop();
  }
  console.log(`\n==== summary (${os.cpus().length} cores, Node ${process.version}) ====`);
  for (const line of all) if (!line.startsWith("window boundaries")) console.log(line);
}

runMain(main);
