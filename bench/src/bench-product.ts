// The distributed product as the records benchmarks start it (bench:records, bench:gateway-ab): the
// compiled services brought up to date, the local PostgreSQL/Redis/Kafka (or kcat's mock), and the
// e2e harness's four processes with the rate limit out of the way and logging at warn.
import { spawnSync } from "node:child_process";
import { mkdirSync } from "node:fs";
import path from "node:path";
import { startInfra, testInfra, type StartedInfra } from "@crm/testing";
import { startDistributed, type RunningDistributed } from "../../e2e/harness";

/** The probes a run can preload into every product process: the variable naming the folder, the preload,
 * and the variable the preload reads the folder's absolute path from. */
const PROBES = [
  // Every product process writes a .cpuprofile there.
  { variable: "BENCH_CPU_PROF", preload: "cpu-profile.cjs", dirVariable: "BENCH_CPU_PROF_DIR" },
  // Embedded PGlite's thread writes the time each statement held it (pglite-probe.cjs).
  { variable: "BENCH_PGLITE_PROBE", preload: "pglite-probe.cjs", dirVariable: "BENCH_PGLITE_PROBE_DIR" },
] as const;

/** The product's environment for the probes asked for: `BENCH_CPU_PROF=<dir>`, `BENCH_PGLITE_PROBE=<dir>`,
 * and `BENCH_NODE_OPTIONS` (flags for every product process, e.g. `--perf-basic-prof` for Linux `perf`). */
export function probeSettings(): Record<string, string> {
  const settings: Record<string, string> = {};
  const nodeOptions: string[] = process.env.BENCH_NODE_OPTIONS ? [process.env.BENCH_NODE_OPTIONS] : [];
  for (const { variable, preload, dirVariable } of PROBES) {
    const dir = process.env[variable];
    if (!dir) continue;
    // A process cannot write into a folder that is not there, and says nothing at exit.
    mkdirSync(dir, { recursive: true });
    nodeOptions.push(`--require ${path.join(__dirname, preload)}`);
    settings[dirVariable] = path.resolve(dir);
  }
  if (nodeOptions.length > 0) settings.NODE_OPTIONS = nodeOptions.join(" ");
  return settings;
}

export async function startBenchProduct(): Promise<{ infra: StartedInfra; product: RunningDistributed }> {
  // The harness runs the compiled services (dist/), as production does: bring them up to date first.
  const build = spawnSync(process.execPath, [path.resolve(__dirname, "../../scripts/build.mjs"), "--if-stale"], { stdio: "inherit" });
  if (build.status !== 0) throw new Error("pnpm build failed");
  const infra = await startInfra((line) => console.log(line));
  if (!infra.databaseUrl || !infra.redisUrl || !infra.kafkaBrokers) throw new Error("the benchmark needs PostgreSQL, Redis and Kafka (or kcat)");
  // What jest's global setup would hand the e2e harness.
  Object.assign(testInfra, { databaseUrl: infra.databaseUrl, redisUrl: infra.redisUrl, kafkaBrokers: infra.kafkaBrokers });
  console.log(`starting the product (distributed) ...`);
  const product = await startDistributed({ RATE_LIMIT_MAX: "1000000000", LOG_LEVEL: "warn", ...probeSettings() });
  return { infra, product };
}
