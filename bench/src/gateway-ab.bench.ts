// `pnpm bench:gateway-ab`: two builds of the gateway side by side on one product, loaded at the same
// time, so both see the same machine. On a machine shared with other work a gateway's CPU per
// request moves by 2-3x between runs of a few seconds (docs/performance.md, "The gateway hop, fifth
// round"); loaded one after the other, two builds are compared across that noise. Loaded together,
// every interval disturbs both alike, and the ratio of their CPU per request is steady.
//
// The product runs in distributed mode (as `bench:records` starts it); the second gateway is the build
// in BENCH_GATEWAY_B (a folder named `gateway` two levels below the repository root holding
// `dist/main.js`, e.g. `.ab/gateway` with a copy of services/gateway/dist). Per round: both gateways
// at saturation, half the connections each, for GET list (1,000 clients) and POST /client; then all
// three ways (A, B, straight to crm-records) paced at the same fixed rate at once, for the added p50.
// Then, each gateway alone, the system calls it makes per forwarded list (`strace -c`, when strace is
// installed): a count, not a time, so the machine's load does not move it.
// Settings: BENCH_GATEWAY_B (required), BENCH_ROUNDS=8, BENCH_DURATION_S=3, BENCH_CONNECTIONS=20,
// BENCH_RATE=30 (per way, paced), BENCH_STRACE_REQUESTS=2000 (0: skip), BENCH_CPU_PROF=<dir> (every product
// process, both gateways included, writes a .cpuprofile there, as in bench:records).
import { spawn, spawnSync } from "node:child_process";
import { readdirSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { Client } from "pg";
import { startBenchProduct } from "./bench-product";
import { cpuMs, median, pidListeningOn, runLoad, runMain, runPaced, type LoadResult } from "./load";
import { signUp } from "./records-caller";
import { seedClients } from "./records-seed";

const GATEWAY_B = process.env.BENCH_GATEWAY_B;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 8);
const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 3);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 20);
const RATE = Number(process.env.BENCH_RATE ?? 30);
const STRACE_REQUESTS = Number(process.env.BENCH_STRACE_REQUESTS ?? 2000);

/** System calls `pid` makes (all threads) while `work` runs, by name, from `strace -c`; undefined without strace. */
async function syscallsDuring(pid: number, work: () => Promise<void>): Promise<Map<string, number> | undefined> {
  if (spawnSync("strace", ["-V"]).status !== 0) return undefined;
  const out = path.join(os.tmpdir(), `gateway-ab-strace-${pid}-${Date.now()}.txt`);
  const tracer = spawn("strace", ["-c", "-f", "-p", String(pid), "-o", out], { stdio: "ignore" });
  await new Promise((resolve) => setTimeout(resolve, 500));
  await work();
  const exited = new Promise((resolve) => tracer.once("exit", resolve));
  tracer.kill("SIGINT");
  await exited;
  const counts = new Map<string, number>();
  for (const line of readFileSync(out, "utf8").split("\n")) {
    const cols = line.trim().split(/\s+/);
    // % time, seconds, usecs/call, calls, [errors], syscall
    if (cols.length >= 5 && cols[cols.length - 1] !== "total" && /^\d+$/.test(cols[3]!)) counts.set(cols[cols.length - 1]!, Number(cols[3]));
  }
  rmSync(out, { force: true });
  return counts;
}
const LIST = "/api/v1/client?perPage=20&include=-contacts";
const NEW_CLIENT = JSON.stringify({ firstName: "Grace", lastName: "Hopper", email: "grace@example.test", companyName: "Navy" });

async function main(): Promise<void> {
  if (!GATEWAY_B) throw new Error("BENCH_GATEWAY_B=<folder of the other build> is required");
  const { infra, product } = await startBenchProduct();
  const records = product.services["crm-records"];
  const db = new Client({ connectionString: records.databaseUrl });
  try {
    await db.connect();
    const urls = { A: product.baseUrl, B: await product.startGateway(GATEWAY_B) };
    const pids = { A: pidListeningOn(Number(new URL(urls.A).port)), B: pidListeningOn(Number(new URL(urls.B).port)) };
    const caller = await signUp(urls.A, "ab", product.internalTokenSecret);
    await seedClients(db, caller.businessId, 1000);
    const gatewayHeaders = caller.headers.gateway;
    const directHeaders = caller.headers.direct;

    /** Kernel-mode CPU of a process so far, ms (/proc/<pid>/stat stime): the share spent in system calls. */
    const systemMs = (pid: number) => Number(readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ")[12]) * 10;
    /** Context switches of a process's threads so far (voluntary + involuntary, /proc/<pid>/task/<tid>/status): its wake-ups. */
    const switches = (pid: number) =>
      readdirSync(`/proc/${pid}/task`).reduce((sum, tid) => {
        const status = readFileSync(`/proc/${pid}/task/${tid}/status`, "utf8");
        return sum + Number(/voluntary_ctxt_switches:\s+(\d+)/.exec(status)?.[1] ?? 0) + Number(/nonvoluntary_ctxt_switches:\s+(\d+)/.exec(status)?.[1] ?? 0);
      }, 0);
    type Row = { a: number; b: number; rpsA: number; rpsB: number; sysA: number; sysB: number; swA: number; swB: number };
    const rows: Record<"list" | "create", Row[]> = { list: [], create: [] };
    const paced: Array<{ a: number; b: number; direct: number }> = [];
    const both = async (method: "GET" | "POST", durationS: number): Promise<Row> => {
      const before = { A: cpuMs(pids.A), B: cpuMs(pids.B), sysA: systemMs(pids.A), sysB: systemMs(pids.B), swA: switches(pids.A), swB: switches(pids.B) };
      const load = (url: string) =>
        runLoad({
          url: url + (method === "GET" ? LIST : "/api/v1/client"),
          method,
          headers: gatewayHeaders,
          body: method === "POST" ? NEW_CLIENT : undefined,
          connections: CONNECTIONS / 2,
          durationS,
        });
      const [a, b] = (await Promise.all([load(urls.A), load(urls.B)])) as [LoadResult, LoadResult];
      if (a.failures || b.failures) console.log(`  failures: A ${a.failures}, B ${b.failures}`);
      const perRequest = (pid: number, was: number, r: LoadResult) => (cpuMs(pid) - was) / (r.rps * durationS);
      const share = (pid: number, cpuWas: number, sysWas: number) => (systemMs(pid) - sysWas) / Math.max(1, cpuMs(pid) - cpuWas);
      return {
        a: perRequest(pids.A, before.A, a),
        b: perRequest(pids.B, before.B, b),
        rpsA: a.rps,
        rpsB: b.rps,
        sysA: share(pids.A, before.A, before.sysA),
        sysB: share(pids.B, before.B, before.sysB),
        swA: (switches(pids.A) - before.swA) / (a.rps * durationS),
        swB: (switches(pids.B) - before.swB) / (b.rps * durationS),
      };
    };

    console.log("warming up ...");
    await both("GET", 2);
    await both("POST", 2);
    for (let round = 0; round < ROUNDS; round++) {
      rows.list.push(await both("GET", DURATION_S));
      rows.create.push(await both("POST", DURATION_S));
      const pace = (url: string, headers: Record<string, string>) => runPaced({ url: url + LIST, headers, connections: CONNECTIONS, durationS: DURATION_S, rate: RATE });
      const [a, b, direct] = await Promise.all([pace(urls.A, gatewayHeaders), pace(urls.B, gatewayHeaders), pace(records.url, directHeaders)]);
      paced.push({ a: a.p50, b: b.p50, direct: direct.p50 });
      console.log(`round ${round + 1}/${ROUNDS} done`);
    }

    console.log(
      `\ngateway A/B, loaded together: ${CONNECTIONS / 2} connections each, ${ROUNDS} rounds x ${DURATION_S} s; ${os.cpus().length} cores, load average ${os.loadavg()[0]!.toFixed(1)}, Node ${process.version}, ${new Date().toISOString()}`,
    );
    console.log(`A = services/gateway/dist, B = ${GATEWAY_B}`);
    for (const [name, list] of Object.entries(rows)) {
      const ratios = list.map((r) => r.a / r.b);
      console.log(
        `${name.padEnd(7)} gateway CPU per request, ms: A ${median(list.map((r) => r.a)).toFixed(3)}  B ${median(list.map((r) => r.b)).toFixed(3)}  A/B ${median(ratios).toFixed(3)} (per round: ${ratios.map((x) => x.toFixed(2)).join(" ")}; A lower in ${ratios.filter((x) => x < 1).length} of ${ratios.length})`,
      );
      console.log(
        `${"".padEnd(7)} req/s: A ${median(list.map((r) => r.rpsA)).toFixed(0)}  B ${median(list.map((r) => r.rpsB)).toFixed(0)}; system (kernel) share of that CPU: A ${median(list.map((r) => r.sysA)).toFixed(2)}  B ${median(list.map((r) => r.sysB)).toFixed(2)}; context switches per request: A ${median(list.map((r) => r.swA)).toFixed(2)}  B ${median(list.map((r) => r.swB)).toFixed(2)}`,
      );
    }
    if (STRACE_REQUESTS > 0) {
      // Redis's own CPU per request too (it shares the machine's cores); other users of this Redis count in it.
      const redisPid = (() => {
        try {
          return pidListeningOn(Number(new URL(infra.redisUrl!).port || 6379));
        } catch {
          return undefined;
        }
      })();
      for (const [name, url] of Object.entries(urls) as Array<["A" | "B", string]>) {
        const redisBefore = redisPid === undefined ? undefined : cpuMs(redisPid);
        const counts = await syscallsDuring(pids[name], async () => {
          await runLoad({ url: url + LIST, headers: gatewayHeaders, connections: CONNECTIONS / 2, durationS: 60, amount: STRACE_REQUESTS });
        });
        if (redisPid !== undefined && redisBefore !== undefined) {
          console.log(`Redis CPU per forwarded list, gateway ${name} alone: ${((cpuMs(redisPid) - redisBefore) / STRACE_REQUESTS).toFixed(3)} ms`);
        }
        if (!counts) break;
        const total = [...counts.values()].reduce((a, b) => a + b, 0) / STRACE_REQUESTS;
        const top = [...counts]
          .sort((a, b) => b[1] - a[1])
          .slice(0, 8)
          .map(([call, n]) => `${call} ${(n / STRACE_REQUESTS).toFixed(2)}`);
        console.log(`system calls per forwarded list, gateway ${name} alone (${STRACE_REQUESTS} requests under strace): ${total.toFixed(2)} in all; ${top.join(", ")}`);
      }
    }
    const added = (pick: (p: (typeof paced)[number]) => number) => median(paced.map((p) => pick(p) - p.direct)).toFixed(2);
    console.log(
      `paced at ${RATE}/s each, all three at once: added p50 over straight to crm-records, ms: A ${added((p) => p.a)}  B ${added((p) => p.b)} (straight p50 ${median(paced.map((p) => p.direct)).toFixed(2)} ms)`,
    );
  } finally {
    await db.end().catch(() => undefined);
    await product.stop().catch((err) => console.error(String(err)));
    await infra.stop();
  }
}

runMain(main);
