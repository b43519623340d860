// `pnpm bench:hop-floor` (issue 9, the gateway hop): what ANY proxy in front of crm-records costs on
// this machine, the floor the gateway's hop goals are read against (docs/performance.md, "Goals").
// The product runs distributed as `pnpm bench:records` starts it (the compiled services, one process
// each, on the local PostgreSQL, Redis and Kafka); the bare proxy of bare-proxy.ts runs in a process
// of its own in front of crm-records. The load generator drives POST /client and the default list of a
// 1,000-client business straight to crm-records (the internal token the gateway would send) and
// through the proxy, alternating which goes first, round by round, and prints req/s through the proxy
// over straight (the gateway's goal is >= 0.85) and the proxy's and crm-records' CPU per request.
// Then the same at a fixed, evenly paced rate (BENCH_RATE, well below saturation, so a busy machine
// disturbs it less): the p50 the proxy adds (the gateway's goal at half saturation is <= 1 ms).
// Settings (environment): BENCH_ROUNDS=5 (the first warms the JIT and is not counted)
// BENCH_DURATION_S=3  BENCH_CONNECTIONS=20  BENCH_RATE=300. It prints figures; nothing is asserted.
import os from "node:os";
import { Client } from "pg";
import { startBenchProduct } from "./bench-product";
import { cpuMs, median, pidListeningOn, runLoad, runMain, runPaced } from "./load";
import { spawnPeer } from "./peer-process";
import { signUp } from "./records-caller";
import { seedClients } from "./records-seed";

const ROUNDS = Math.max(2, Number(process.env.BENCH_ROUNDS ?? 5));
const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 3);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 20);
const RATE = Number(process.env.BENCH_RATE ?? 300);
const CLIENTS = 1000;
const BODY = JSON.stringify({ firstName: "Grace", lastName: "Hopper", email: "grace@example.test", companyName: "Navy" });
const REQUESTS = [
  { name: "POST /client", method: "POST", path: "/api/v1/client" },
  { name: "default list", method: "GET", path: "/api/v1/client?perPage=20&include=-contacts" },
] as const;
const WAYS = ["straight", "proxy"] as const;
type Way = (typeof WAYS)[number];

async function main(): Promise<void> {
  const { infra, product } = await startBenchProduct();
  const records = product.services["crm-records"];
  let proxy: Awaited<ReturnType<typeof spawnPeer>> | undefined;
  try {
    const caller = await signUp(product.baseUrl, "hop-floor", product.internalTokenSecret);
    const db = new Client({ connectionString: records.databaseUrl });
    await db.connect();
    await seedClients(db, caller.businessId, CLIENTS);
    await db.query(`ANALYZE "records"."Client"`);
    await db.end();
    proxy = await spawnPeer("bare-proxy.ts", [records.url]);
    const urls: Record<Way, string> = { straight: records.url, proxy: proxy.url };
    // tsx runs the proxy in a child process of its own: read the CPU of the one that listens.
    const pids = { records: pidListeningOn(Number(new URL(records.url).port)), proxy: pidListeningOn(Number(new URL(proxy.url).port)) };
    const headers = caller.headers.direct;
    console.log(
      `hop floor: ${CONNECTIONS} connections, ${ROUNDS} rounds x ${DURATION_S} s, ${os.cpus().length} cores, load average ${os.loadavg()[0]!.toFixed(1)}, Node ${process.version}, ${new Date().toISOString()}`,
    );

    for (const request of REQUESTS) {
      const ratios: number[] = [];
      const proxyCpu: number[] = [];
      const recordsCpu: Record<Way, number[]> = { straight: [], proxy: [] };
      for (let round = 0; round < ROUNDS; round++) {
        const rates: Partial<Record<Way, number>> = {};
        const spent: Partial<Record<Way, { records: number; proxy: number }>> = {};
        for (const way of round % 2 ? [...WAYS].reverse() : WAYS) {
          const before = { records: cpuMs(pids.records), proxy: cpuMs(pids.proxy) };
          const result = await runLoad({
            url: urls[way] + request.path,
            method: request.method,
            headers,
            ...(request.method === "POST" ? { body: BODY } : {}),
            connections: CONNECTIONS,
            durationS: DURATION_S,
          });
          if (result.failures > 0) throw new Error(`${request.name} ${way}: ${result.failures} failures`);
          const answered = result.rps * DURATION_S;
          rates[way] = result.rps;
          spent[way] = { records: (cpuMs(pids.records) - before.records) / answered, proxy: (cpuMs(pids.proxy) - before.proxy) / answered };
        }
        const ratio = rates.proxy! / rates.straight!;
        console.log(
          `  ${request.name} round ${round + 1}: straight ${rates.straight!.toFixed(0)} req/s, through the proxy ${rates.proxy!.toFixed(0)} req/s, ratio ${ratio.toFixed(2)}; CPU ms/req: proxy ${spent.proxy!.proxy.toFixed(3)}, crm-records ${spent.straight!.records.toFixed(3)} straight / ${spent.proxy!.records.toFixed(3)} behind the proxy`,
        );
        if (round === 0) continue;
        ratios.push(ratio);
        proxyCpu.push(spent.proxy!.proxy);
        for (const way of WAYS) recordsCpu[way].push(spent[way]!.records);
      }
      console.log(
        `${request.name}: through a bare proxy / straight ${median(ratios).toFixed(2)} (the gateway's goal is >= 0.85); the proxy's CPU ${median(proxyCpu).toFixed(3)} ms per request; crm-records' ${median(recordsCpu.straight).toFixed(3)} straight, ${median(recordsCpu.proxy).toFixed(3)} behind the proxy`,
      );
    }

    for (const request of REQUESTS) {
      const added: number[] = [];
      for (let round = 0; round < ROUNDS; round++) {
        const p50: Partial<Record<Way, number>> = {};
        for (const way of round % 2 ? [...WAYS].reverse() : WAYS) {
          const result = await runPaced({
            url: urls[way] + request.path,
            method: request.method,
            headers,
            ...(request.method === "POST" ? { body: BODY } : {}),
            connections: CONNECTIONS,
            durationS: DURATION_S,
            rate: RATE,
          });
          if (result.failures > 0) throw new Error(`${request.name} ${way} at ${RATE}/s: ${result.failures} failures`);
          p50[way] = result.p50;
        }
        const extra = p50.proxy! - p50.straight!;
        console.log(`  ${request.name} @ ${RATE}/s round ${round + 1}: straight p50 ${p50.straight!.toFixed(2)} ms, the proxy adds ${extra.toFixed(2)} ms`);
        if (round > 0) added.push(extra);
      }
      console.log(`${request.name} @ ${RATE}/s: a bare proxy adds ${median(added).toFixed(2)} ms at p50 (the gateway's goal at half saturation is <= 1 ms)`);
    }
  } finally {
    await proxy?.close();
    await product.stop();
    await infra.stop();
  }
}

runMain(main);
