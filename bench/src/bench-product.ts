// The distributed product as the records benchmarks start it (bench:records, bench:hop-floor): the
// compiled services brought up to date, the local PostgreSQL/Redis/Kafka (or kcat's mock), and the
// e2e harness's four processes with the rate limit out of the way and logging at warn.
import { spawnSync } from "node:child_process";
import { mkdirSync } from "node:fs";
import path from "node:path";
import { startInfra, testInfra, type StartedInfra } from "@crm/testing";
import { startDistributed, type RunningDistributed } from "../../e2e/harness";

/**
 * The product's environment for what a run asks for: `BENCH_CPU_PROF=<dir>` (every product process writes
 * a .cpuprofile there, through the cpu-profile.cjs preload), `BENCH_NODE_OPTIONS` (flags for every
 * product process, e.g. `--perf-basic-prof` for Linux `perf`), and crm-records' device switches
 * (`RECORDS_*`, docs/performance.md), passed through so a device can be measured on and off.
 */
export function probeSettings(): Record<string, string> {
  const settings: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) if (name.startsWith("RECORDS_") && value !== undefined) settings[name] = value;
  const nodeOptions: string[] = process.env.BENCH_NODE_OPTIONS ? [process.env.BENCH_NODE_OPTIONS] : [];
  const profiles = process.env.BENCH_CPU_PROF;
  if (profiles) {
    // A process cannot write into a folder that is not there, and says nothing at exit.
    mkdirSync(profiles, { recursive: true });
    nodeOptions.push(`--require ${path.join(__dirname, "cpu-profile.cjs")}`);
    settings.BENCH_CPU_PROF_DIR = path.resolve(profiles);
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
