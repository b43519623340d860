// `tsx bench/src/embedded-records-ab.bench.ts`: client list and create speed of the embedded product
// (`pnpm start`: one process, PGlite, the in-process bus) for one or more builds, alternating, so two
// checkouts can be compared in one session (issue 15: PGlite on its own thread must not slow them).
//
// Each round starts each build's compiled `infra/standalone/dist/start.js` on a fresh DATA_DIR, signs
// up, creates BENCH_SEED clients, then runs autocannon for BENCH_LOAD_S on GET /api/v1/client?perPage=20
// and then on POST /api/v1/client, BENCH_CONNECTIONS connections each. Printed per run: requests/s,
// p50/p99 latency, and CPU per request of the whole process and of its main thread (from /proc);
// after the creates, the client count is checked against the creates answered (no lost writes).
//
// Settings (environment): BENCH_BUILDS=<repo root>[,<repo root>...] (default: this checkout; each
// must be built)  BENCH_ROUNDS=3  BENCH_LOAD_S=8  BENCH_CONNECTIONS=10  BENCH_SEED=200.
// It prints figures; nothing is asserted.
import { readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { startEmbedded } from "../../e2e/harness";
import { cpuMs, median, runLoad, runMain } from "./load";

const ROOT = path.resolve(__dirname, "../..");
const BUILDS = (process.env.BENCH_BUILDS ?? ROOT).split(",").map((b) => path.resolve(b.trim()));
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const LOAD_S = Number(process.env.BENCH_LOAD_S ?? 8);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10);
const SEED = Number(process.env.BENCH_SEED ?? 200);

/** The main thread's CPU so far, in ms (its task's /proc stat; the process's other threads excluded). */
function mainThreadCpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/task/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/** One build's embedded product on a fresh data directory, started as the e2e suite starts it. */
async function start(root: string): Promise<{ url: string; pid: number; stop(): Promise<void> }> {
  const product = await startEmbedded({ RATE_LIMIT_MAX: "1000000000" }, { root });
  return {
    url: product.baseUrl,
    pid: product.pid,
    stop: async () => {
      await product.stop();
      rmSync(product.dataDir, { recursive: true, force: true });
    },
  };
}

async function signUp(url: string): Promise<Record<string, string>> {
  const res = await fetch(`${url}/api/v1/auth/sign-up`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ businessName: "Bench AB", email: `ab-${Date.now()}@example.test`, password: "correct-horse-battery" }),
  });
  if (res.status !== 201) throw new Error(`sign-up failed: ${res.status} ${await res.text()}`);
  const { data } = (await res.json()) as { data: { accessToken: string } };
  return { "content-type": "application/json", authorization: `Bearer ${data.accessToken}` };
}

interface Figures {
  rps: number;
  p50: number;
  p99: number;
  failures: number;
  cpuUs: number;
  mainUs: number;
}

async function measure(pid: number, load: Parameters<typeof runLoad>[0]): Promise<Figures> {
  const cpu0 = cpuMs(pid);
  const main0 = mainThreadCpuMs(pid);
  const result = await runLoad(load);
  const requests = result.rps * LOAD_S;
  return { ...result, cpuUs: ((cpuMs(pid) - cpu0) * 1000) / requests, mainUs: ((mainThreadCpuMs(pid) - main0) * 1000) / requests };
}

const show = (f: Figures) =>
  `${f.rps.toFixed(0).padStart(5)} /s  p50 ${String(f.p50).padStart(3)} ms  p99 ${String(f.p99).padStart(4)} ms  CPU/request ${f.cpuUs.toFixed(0)} µs (main thread ${f.mainUs.toFixed(0)})${f.failures ? `  FAILURES ${f.failures}` : ""}`;

runMain(async () => {
  console.log(
    `node ${process.version}, ${os.cpus().length} cores, ${new Date().toISOString()}, load ${os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(" ")}`,
  );
  const results = new Map<string, { list: Figures[]; create: Figures[] }>(BUILDS.map((b) => [b, { list: [], create: [] }]));
  for (let round = 1; round <= ROUNDS; round++) {
    for (const root of BUILDS) {
      const product = await start(root);
      try {
        const headers = await signUp(product.url);
        for (let i = 0; i < SEED; i++) {
          const res = await fetch(`${product.url}/api/v1/client`, {
            method: "POST",
            headers,
            body: JSON.stringify({ firstName: `F${i}`, lastName: "Seed", email: `s${i}@example.test` }),
          });
          if (res.status !== 201) throw new Error(`seed create failed: ${res.status} ${await res.text()}`);
        }
        const { pid } = product;
        const list = await measure(pid, { url: `${product.url}/api/v1/client?perPage=20`, headers, connections: CONNECTIONS, durationS: LOAD_S });
        const body = JSON.stringify({ firstName: "Load", lastName: "Bench", email: "load@example.test" });
        const create = await measure(pid, { url: `${product.url}/api/v1/client`, method: "POST", headers, body, connections: CONNECTIONS, durationS: LOAD_S });
        // No lost writes: every create answered 2xx is a row (the seed's too). autocannon stops counting at the
        // end of its duration with up to one request per connection still in flight; those may be rows too.
        const answered = Math.round(create.rps * LOAD_S) - create.failures;
        const total = (await (await fetch(`${product.url}/api/v1/client?perPage=1`, { headers })).json()) as { meta: { total: number } };
        const least = SEED + answered;
        if (total.meta.total < least || total.meta.total > least + CONNECTIONS)
          console.log(`  ROWS ${total.meta.total}, expected ${least} to ${least + CONNECTIONS} (seed + creates answered + in flight at the end)`);
        results.get(root)!.list.push(list);
        results.get(root)!.create.push(create);
        console.log(`round ${round}  ${root}\n  list   ${show(list)}\n  create ${show(create)}`);
      } finally {
        await product.stop();
      }
    }
  }
  console.log("\nmedians (requests/s, CPU µs per request, main thread µs per request):");
  for (const [root, { list, create }] of results) {
    const m = (fs: Figures[], k: keyof Figures) => median(fs.map((f) => f[k])).toFixed(0);
    console.log(
      `  ${root}: list ${m(list, "rps")} /s, ${m(list, "cpuUs")} µs (${m(list, "mainUs")}); create ${m(create, "rps")} /s, ${m(create, "cpuUs")} µs (${m(create, "mainUs")})`,
    );
  }
});
