// `pnpm bench:hop-paced` (issue 9, the hop's added p50 at a fixed rate): the default 1,000-client list
// paced at BENCH_RATE through the gateway (and a second build, BENCH_GATEWAY_B) and straight to
// crm-records, one way at a time in slices of BENCH_SLICE_S seconds, rotating which goes first,
// for BENCH_CYCLES cycles, on one product. On a machine shared with other work, a few seconds per
// way (bench:records' hop row) move by more than the hop itself between runs; slices of a second,
// interleaved, see the same load, and the per-cycle differences are paired.
//
// Prints per way the pooled p50/p90 and the median of the per-cycle differences against straight
// (the added p50); with a second build, in how many cycles the first was lower. The pools stay open
// across slices (no connection set-up in the figures). Latency counts from when a request was due.
// Settings: BENCH_RATE=200 BENCH_CYCLES=30 BENCH_SLICE_S=1, BENCH_GATEWAY_B=<folder named gateway
// two levels below the repository root holding another build's dist/main.js (as in bench:records)>,
// BENCH_DIRECT_GW=1 adds a fourth way: straight to crm-records with exactly the headers the gateway
// sends (its internal token of the caller's whole principal, a request id, X-Forwarded-*).
import os from "node:os";
import { Client } from "pg";
import type { Pool as PoolType } from "undici";
import { rolePermissions, type Principal } from "@crm/contracts";
import { signInternalToken } from "@crm/service-kit";
import { startBenchProduct } from "./bench-product";
import { cpuMs, median, pidListeningOn, runMain } from "./load";
import { signUp } from "./records-caller";
import { seedClients } from "./records-seed";

const RATE = Number(process.env.BENCH_RATE ?? 200);
const CYCLES = Number(process.env.BENCH_CYCLES ?? 30);
const SLICE_S = Number(process.env.BENCH_SLICE_S ?? 1);
const GATEWAY_B = process.env.BENCH_GATEWAY_B;
const LIST = "/api/v1/client?perPage=20&include=-contacts";
const CONNECTIONS = 20;

interface Way {
  name: string;
  url: string;
  headers: Record<string, string>;
}

const quantile = (values: readonly number[], q: number) => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(q * values.length))] ?? NaN;

/** `RATE` requests a second for `seconds`, evenly spaced; latencies (ms from when each was due) of the 200s. */
async function slice(pool: PoolType, headers: Record<string, string>, seconds: number): Promise<number[]> {
  const latencies: number[] = [];
  const total = Math.round(RATE * seconds);
  const intervalMs = 1000 / RATE;
  const start = performance.now();
  const inFlight: Array<Promise<void>> = [];
  for (let i = 0; i < total; i++) {
    const due = start + i * intervalMs;
    const wait = due - performance.now();
    if (wait > 1) await new Promise((resolve) => setTimeout(resolve, wait));
    inFlight.push(
      pool.request({ method: "GET", path: LIST, headers }).then(async (res) => {
        await res.body.dump();
        if (res.statusCode === 200) latencies.push(performance.now() - due);
      }),
    );
  }
  await Promise.all(inFlight);
  return latencies;
}

async function main(): Promise<void> {
  const { infra, product } = await startBenchProduct();
  const records = product.services["crm-records"];
  const db = new Client({ connectionString: records.databaseUrl });
  const { Pool } = await import("undici");
  const pools = new Map<string, PoolType>();
  try {
    await db.connect();
    const caller = await signUp(product.baseUrl, "hop-paced", product.internalTokenSecret);
    await seedClients(db, caller.businessId, 1000);
    const ways: Way[] = [{ name: "gateway", url: product.baseUrl, headers: caller.headers.gateway }];
    if (GATEWAY_B) ways.push({ name: "gatewayB", url: await product.startGateway(GATEWAY_B), headers: caller.headers.gateway });
    ways.push({ name: "direct", url: records.url, headers: caller.headers.direct });
    if (process.env.BENCH_DIRECT_GW) {
      const jwt = caller.headers.gateway.authorization!.slice("Bearer ".length);
      const claims = JSON.parse(Buffer.from(jwt.split(".")[1]!, "base64url").toString("utf8")) as { sub: string; jti: string; sid: string };
      const principal: Principal = {
        businessId: caller.businessId,
        authType: "jwt",
        userId: claims.sub,
        apiKeyId: null,
        sessionId: claims.sid,
        jti: claims.jti,
        permissions: [...rolePermissions.OWNER],
      };
      const headers = {
        "x-internal-token": signInternalToken({ principal }, product.internalTokenSecret),
        "x-request-id": "hop-paced",
        "x-forwarded-for": "127.0.0.1",
        "x-forwarded-proto": "http",
      };
      ways.push({ name: "directGw", url: records.url, headers });
    }
    const pids = new Map<string, number>([["crm-records", pidListeningOn(Number(new URL(records.url).port))]]);
    for (const way of ways.filter((w) => w.name.startsWith("gateway"))) pids.set(way.name, pidListeningOn(Number(new URL(way.url).port)));
    for (const way of ways) pools.set(way.name, new Pool(new URL(way.url).origin, { connections: CONNECTIONS, pipelining: 1 }));

    console.log("warming up ...");
    for (const way of ways) await slice(pools.get(way.name)!, way.headers, 2);
    const all = new Map<string, number[]>();
    const perCycle = new Map<string, number[]>();
    const cpu = new Map<string, number>();
    for (let cycle = 0; cycle < CYCLES; cycle++) {
      for (let i = 0; i < ways.length; i++) {
        const way = ways[(i + cycle) % ways.length]!;
        const before = new Map([...pids].map(([name, pid]) => [name, cpuMs(pid)]));
        const latencies = await slice(pools.get(way.name)!, way.headers, SLICE_S);
        for (const [name, pid] of pids) cpu.set(`${way.name}/${name}`, (cpu.get(`${way.name}/${name}`) ?? 0) + cpuMs(pid) - before.get(name)!);
        all.set(way.name, [...(all.get(way.name) ?? []), ...latencies]);
        perCycle.set(way.name, [...(perCycle.get(way.name) ?? []), quantile(latencies, 0.5)]);
      }
    }

    console.log(
      `\nhop, paced: default list, 1,000 clients, ${RATE}/s, ${CYCLES} cycles x ${SLICE_S} s per way, rotating; ${os.cpus().length} cores, load average ${os.loadavg()[0]!.toFixed(1)}, Node ${process.version}, ${new Date().toISOString()}`,
    );
    if (GATEWAY_B) console.log(`gateway = services/gateway/dist, gatewayB = ${GATEWAY_B}`);
    const direct = perCycle.get("direct")!;
    for (const way of ways) {
      const latencies = all.get(way.name)!;
      const cycles = perCycle.get(way.name)!;
      const added = way.name === "direct" ? "" : `  added p50 (median of per-cycle differences) ${median(cycles.map((p, i) => p - direct[i]!)).toFixed(2)} ms`;
      const gatewayCpu = pids.has(way.name) ? `  its CPU ${(cpu.get(`${way.name}/${way.name}`)! / latencies.length).toFixed(3)} ms/request` : "";
      const recordsCpu = `  crm-records CPU ${(cpu.get(`${way.name}/crm-records`)! / latencies.length).toFixed(3)} ms/request`;
      console.log(`${way.name.padEnd(9)} p50 ${quantile(latencies, 0.5).toFixed(2)}  p90 ${quantile(latencies, 0.9).toFixed(2)} ms${added}${gatewayCpu}${recordsCpu}`);
    }
    if (GATEWAY_B) {
      const a = perCycle.get("gateway")!;
      const b = perCycle.get("gatewayB")!;
      console.log(
        `gateway - gatewayB, per-cycle p50: median ${median(a.map((x, i) => x - b[i]!)).toFixed(2)} ms; gateway lower in ${a.filter((x, i) => x < b[i]!).length} of ${CYCLES}`,
      );
    }
  } finally {
    for (const pool of pools.values()) await pool.close().catch(() => undefined);
    await db.end().catch(() => undefined);
    await product.stop().catch((err) => console.error(String(err)));
    await infra.stop();
  }
}

runMain(main);
