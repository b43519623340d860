// The distributed product as the records benchmarks start it (bench:records, bench:gateway-ab): the
// compiled services brought up to date, the local PostgreSQL/Redis/Kafka (or kcat's mock), and the
// e2e harness's four processes with the rate limit out of the way and logging at warn.
import { spawnSync } from "node:child_process";
import { mkdirSync } from "node:fs";
import path from "node:path";
import { startInfra, testInfra, type StartedInfra } from "@crm/testing";
import { startDistributed, type RunningDistributed } from "../../e2e/harness";

/** `BENCH_CPU_PROF=<dir>`: every product process writes a .cpuprofile there. */
export function cpuProfileSettings(): Record<string, string> {
  const settings: Record<string, string> = {};
  const requires: string[] = [];
  // A process cannot write into a folder that is not there, and says nothing at exit.
  for (const [variable, probe] of [
    ["BENCH_CPU_PROF", "cpu-profile.cjs"],
    ["BENCH_PGLITE_PROBE", "pglite-probe.cjs"],
  ] as const) {
    const dir = process.env[variable];
    if (!dir) continue;
    mkdirSync(dir, { recursive: true });
    requires.push(`--require ${path.join(__dirname, probe)}`);
    settings[`${variable === "BENCH_CPU_PROF" ? "BENCH_CPU_PROF_DIR" : "BENCH_PGLITE_PROBE_DIR"}`] = path.resolve(dir);
  }
  if (requires.length > 0) settings.NODE_OPTIONS = requires.join(" ");
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
  const product = await startDistributed({ RATE_LIMIT_MAX: "1000000000", LOG_LEVEL: "warn", ...cpuProfileSettings() });
  return { infra, product };
}
