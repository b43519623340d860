// `pnpm bench:feed` (issue 40, extensions §E6): what the change feed costs, against the list it is
// compared with. Both through the gateway, with a JWT, in the mode BENCH_MODE says (distributed: the
// compiled services on the local PostgreSQL, Redis and Kafka; embedded: `pnpm start`'s one process).
// 1. Reading 100 events (GET /events?perPage=100 from the start) against a list page of 100 clients
//    (GET /client?perPage=100), alternating round by round: req/s, p99 and the ratio (goal: >= 1.0,
//    the feed costs no more than the list).
// 2. Freshness: a writer creates clients at BENCH_WRITE_RATE (100/s) while a follower waits on the
//    feed (wait=30); for each client, the time from its create's answer to its event's arrival at the
//    follower (the commit is earlier than the answer, so this is a lower bound of commit -> readable;
//    the goal is p99 <= 50 ms embedded, <= the Kafka fetch wait + 50 ms distributed).
// 3. Followers at rest: BENCH_FOLLOWERS (1,000) requests wait on the feed (wait=30) at once; the memory
//    (RSS) they add to the process that serves the feed and to the gateway, and the CPU both spend in
//    BENCH_IDLE_S (10) seconds while nothing is written (goal: <= 50 MB, no measurable CPU); then one
//    create answers them all.
// Settings: BENCH_MODE=distributed|embedded  BENCH_ROUNDS=4  BENCH_DURATION_S=3  BENCH_CONNECTIONS=10
// BENCH_WRITE_RATE=100  BENCH_WRITE_S=10  BENCH_FOLLOWERS=1000  BENCH_IDLE_S=10.
// Shortest: BENCH_ROUNDS=2 BENCH_DURATION_S=1 BENCH_CONNECTIONS=2 BENCH_WRITE_S=1 BENCH_FOLLOWERS=100 BENCH_IDLE_S=2.
import { readFileSync } from "node:fs";
import os from "node:os";
import { Agent, fetch as undiciFetch } from "undici";
import { type RunningDistributed, type RunningProduct, startEmbedded } from "../../e2e/harness";
import { startBenchProduct } from "./bench-product";
import { cpuMs, median, pidListeningOn, runLoad, runMain } from "./load";
import { signUp } from "./records-caller";

const MODE = process.env.BENCH_MODE === "embedded" ? "embedded" : "distributed";
const ROUNDS = Math.max(2, Number(process.env.BENCH_ROUNDS ?? 4));
const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 3);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10);
const WRITE_RATE = Number(process.env.BENCH_WRITE_RATE ?? 100);
const WRITE_S = Number(process.env.BENCH_WRITE_S ?? 10);
const FOLLOWERS = Number(process.env.BENCH_FOLLOWERS ?? 1000);
const IDLE_S = Number(process.env.BENCH_IDLE_S ?? 10);

function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}

async function createClient(baseUrl: string, headers: Record<string, string>, firstName: string): Promise<string> {
  const res = await fetch(`${baseUrl}/api/v1/client`, { method: "POST", headers, body: JSON.stringify({ firstName, lastName: "Feed" }) });
  if (res.status !== 201) throw new Error(`create failed: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { data: { id: string } }).data.id;
}

async function main(): Promise<void> {
  const started = MODE === "embedded" ? { product: (await startEmbedded({ RATE_LIMIT_MAX: "1000000000", LOG_LEVEL: "warn" })) as RunningProduct } : await startBenchProduct();
  const product = started.product;
  try {
    const caller = await signUp(product.baseUrl, `feed-${MODE}`, "unused-for-the-gateway-way");
    const headers = caller.headers.gateway;
    for (let i = 0; i < 100; i++) await createClient(product.baseUrl, headers, `Seed${i}`);
    console.log(
      `change feed (${MODE}): ${CONNECTIONS} connections, ${ROUNDS} rounds x ${DURATION_S} s, ${os.cpus().length} cores, load average ${os.loadavg()[0]!.toFixed(1)}, Node ${process.version}, ${new Date().toISOString()}`,
    );

    const ways = { feed: "/api/v1/events?perPage=100", list: "/api/v1/client?perPage=100&include=-contacts" } as const;
    const ratios: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const rates: Record<string, { rps: number; p99: number }> = {};
      for (const way of round % 2 ? (["list", "feed"] as const) : (["feed", "list"] as const)) {
        const result = await runLoad({ url: product.baseUrl + ways[way], headers, connections: CONNECTIONS, durationS: DURATION_S });
        if (result.failures > 0) throw new Error(`${way}: ${result.failures} failures`);
        rates[way] = { rps: result.rps, p99: result.p99 };
      }
      const ratio = rates.feed!.rps / rates.list!.rps;
      console.log(
        `  round ${round + 1}: 100 events ${rates.feed!.rps.toFixed(0)} req/s (p99 ${rates.feed!.p99} ms), 100 clients ${rates.list!.rps.toFixed(0)} req/s (p99 ${rates.list!.p99} ms), ratio ${ratio.toFixed(2)}`,
      );
      if (round > 0) ratios.push(ratio);
    }
    console.log(`feed page / list page, median of rounds 2-${ROUNDS}: ${median(ratios).toFixed(2)} (goal >= 1.0)`);

    // Freshness at a steady write rate.
    const tail = (await (await fetch(`${product.baseUrl}/api/v1/events?perPage=100`, { headers })).json()) as { meta: { nextCursor: string } };
    let cursor = tail.meta.nextCursor;
    const answeredAt = new Map<string, number>();
    const arrivedAt = new Map<string, number>();
    let following = true;
    const follower = (async () => {
      while (following || arrivedAt.size < answeredAt.size) {
        const res = await fetch(`${product.baseUrl}/api/v1/events?perPage=100&wait=2&after=${cursor}`, { headers });
        const page = (await res.json()) as { data: Array<{ data: { id: string } }>; meta: { nextCursor: string } };
        const now = performance.now();
        for (const event of page.data) arrivedAt.set(event.data.id, now);
        cursor = page.meta.nextCursor;
        if (!following && page.data.length === 0) break;
      }
    })();
    const writes: Promise<void>[] = [];
    const total = WRITE_RATE * WRITE_S;
    const start = performance.now();
    for (let i = 0; i < total; i++) {
      const due = start + (i * 1000) / WRITE_RATE;
      const wait = due - performance.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      writes.push(createClient(product.baseUrl, headers, `Fresh${i}`).then((id) => void answeredAt.set(id, performance.now())));
    }
    await Promise.all(writes);
    following = false;
    await follower;
    const lags = [...answeredAt].filter(([id]) => arrivedAt.has(id)).map(([id, at]) => arrivedAt.get(id)! - at);
    console.log(
      `freshness at ${WRITE_RATE} writes/s for ${WRITE_S} s: ${lags.length}/${total} events seen; create answered -> event read: p50 ${percentile(lags, 50).toFixed(1)} ms, p99 ${percentile(lags, 99).toFixed(1)} ms`,
    );
    await followersAtRest(product, headers);
  } finally {
    await product.stop();
  }
}

/** Resident memory of a process, in MB (/proc/<pid>/status VmRSS). */
function rssMb(pid: number): number {
  const match = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return match ? Number(match[1]) / 1024 : Number.NaN;
}

/** Phase 3: FOLLOWERS long-polls held at once; what they cost the serving process and the gateway at rest. */
async function followersAtRest(product: RunningProduct, headers: Record<string, string>): Promise<void> {
  const port = (url: string) => Number(new URL(url).port);
  const processes: Record<string, number> = { gateway: pidListeningOn(port(product.baseUrl)) };
  const services = (product as Partial<RunningDistributed>).services;
  if (services) processes["crm-records"] = pidListeningOn(port(services["crm-records"].url));
  const tail = (await (await fetch(`${product.baseUrl}/api/v1/events?perPage=100`, { headers })).json()) as { meta: { nextCursor: string } };
  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
  /** CPU (ms) each process spends in `seconds` from now. */
  const cpuIn = async (seconds: number) => {
    const start = Object.fromEntries(Object.entries(processes).map(([name, pid]) => [name, cpuMs(pid)]));
    await sleep(seconds * 1000);
    return Object.fromEntries(Object.entries(processes).map(([name, pid]) => [name, cpuMs(pid) - start[name]!]));
  };
  // Connections without a cap: each follower holds its own for as long as it waits.
  const agent = new Agent({ connections: null, headersTimeout: 60_000, bodyTimeout: 60_000 });
  const follow = (wait: number) =>
    Array.from({ length: FOLLOWERS }, () =>
      undiciFetch(`${product.baseUrl}/api/v1/events?wait=${wait}&after=${tail.meta.nextCursor}`, { headers, dispatcher: agent }).then(async (res) => {
        const page = (await res.json()) as { data: unknown[] };
        return { status: res.status, events: page.data.length };
      }),
    );
  // The same burst of requests once, answered at once (wait=0): the memory a burst of that size
  // leaves behind (heaps grown, garbage not yet collected) is in "before", not counted as waiting's.
  await Promise.all(follow(0));
  await sleep(1000);
  const restingCpu = await cpuIn(IDLE_S);
  const before = Object.fromEntries(Object.entries(processes).map(([name, pid]) => [name, rssMb(pid)]));
  const followers = follow(30);
  // Taking the followers in costs CPU; at rest is when a second passes with no more than at rest before (at most 30 s).
  const calm = (cpu: Record<string, number>) => Object.keys(processes).every((name) => cpu[name]! <= restingCpu[name]! / IDLE_S + 20);
  for (let second = 0; second < 30 && !calm(await cpuIn(1)); second++);
  const waitingCpu = await cpuIn(IDLE_S);
  const line = Object.entries(processes).map(
    ([name, pid]) => `${name} +${(rssMb(pid) - before[name]!).toFixed(1)} MB RSS, CPU in ${IDLE_S} s ${waitingCpu[name]} ms (${restingCpu[name]} ms without followers)`,
  );
  await createClient(product.baseUrl, headers, "Wakes");
  const answers = await Promise.all(followers);
  await agent.close();
  const woken = answers.filter((answer) => answer.status === 200 && answer.events > 0).length;
  console.log(`${FOLLOWERS} followers waiting (wait=30): ${line.join("; ")}; ${woken}/${FOLLOWERS} answered with the new event`);
}

runMain(main);
