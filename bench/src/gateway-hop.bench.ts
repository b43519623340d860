// `pnpm bench:gateway` (issue 9, the gateway hop): the compiled gateway in front of a stub service
// that answers a fixed 20-record list page, beside the stub reached directly. It isolates what the
// hop costs from everything behind it, and prints the figures a busy machine disturbs least:
// - the gateway's own CPU per forwarded request (user + system time from /proc, over a saturation run),
//   for the list (GET) and for `POST /client` (a small JSON body, answered 201 by the stub),
// - req/s at saturation through the gateway and straight to the stub (20 connections),
// - p50/p99 of the list at a fixed, evenly paced rate (`runPaced`), through the gateway and straight,
//   and the p50 the hop adds.
// The gateway runs as in distributed mode: Redis for the auth state and the rate limiter (DB index
// BENCH_REDIS_DB, default 11, flushed at start and end), a JWT caller whose allow-list entry and user
// state are in Redis as identity writes them. Settings: BENCH_DURATION_S=5 BENCH_ROUNDS=3
// BENCH_CONNECTIONS=20 BENCH_RATE (default: half of the gateway's measured saturation)
// BENCH_NODE_OPTIONS (extra flags for the gateway process, e.g. `--max-semi-space-size=2`);
// MALLOC_ARENA_MAX is passed on to the gateway when set; BENCH_GATEWAY_SCRIPT runs another build
// of the gateway (e.g. another checkout's services/gateway/dist/main.js); BENCH_GATEWAY_SCRIPT_B
// starts a second build beside it and alternates the two in every round (an A/B comparison in one
// run: both see the same machine load); BENCH_SCENARIOS=list,create picks the requests.
// It prints figures; nothing is asserted. Figures and the machine: docs/performance.md.
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { readFileSync, mkdtempSync, rmSync } from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { AccessTokenCodec, AuthCache } from "@crm/auth-cache";
import { RedisKvStore } from "@crm/kv-store";
import { uuidv7 } from "@crm/contracts";
import { freePort } from "@crm/testing";
import { median, runLoad, runPaced, type LoadResult, runMain } from "./load";

const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 5);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 20);
const REDIS_URL = `redis://127.0.0.1:6379/${process.env.BENCH_REDIS_DB ?? 11}`;
const ROOT = path.resolve(__dirname, "../..");
const PATH = "/api/v1/client?perPage=20&include=-contacts";
const CREATE_PATH = "/api/v1/client";
const NEW_CLIENT = JSON.stringify({ firstName: "Grace", lastName: "Hopper", email: "grace@example.test", companyName: "Navy" });

/** A 20-record page shaped like crm-records' answer (~8 KB). */
function listPage(): Buffer {
  const data = Array.from({ length: 20 }, (_, i) => ({
    id: uuidv7(),
    firstName: `First${i}`,
    lastName: `Last${i}`,
    email: `person${i}@example.test`,
    phone: "+1 555 0100",
    companyName: "Example Ltd",
    isActive: true,
    address: { line1: "1 Main Street", city: "Springfield", postalCode: "12345", country: "US" },
    notes: null,
    createdAt: new Date().toISOString(),
    updatedAt: new Date().toISOString(),
  }));
  return Buffer.from(JSON.stringify({ data, meta: { page: 1, perPage: 20, total: 1000, totalPages: 50 } }));
}

/** The created record as crm-records answers a create (~400 bytes). */
function createdRecord(): Buffer {
  const now = new Date().toISOString();
  return Buffer.from(
    JSON.stringify({ data: { id: uuidv7(), ...JSON.parse(NEW_CLIENT), phone: null, isActive: true, address: null, notes: null, createdAt: now, updatedAt: now } }),
  );
}

function startStub(list: Buffer, created: Buffer): Promise<{ url: string; close(): Promise<void> }> {
  const server = http.createServer((req, res) => {
    if (req.method !== "POST") {
      res.writeHead(200, { "content-type": "application/json; charset=utf-8", "content-length": list.length });
      res.end(list);
      return;
    }
    // Read the whole body, as a service does before answering.
    req.on("data", () => undefined);
    req.on("end", () => {
      res.writeHead(201, { "content-type": "application/json; charset=utf-8", "content-length": created.length, location: "/api/v1/client/1" });
      res.end(created);
    });
  });
  server.keepAliveTimeout = 60_000;
  return new Promise((resolve) =>
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      resolve({ url: `http://127.0.0.1:${port}`, close: () => new Promise((r) => server.close(() => r())) });
    }),
  );
}

/** User + system CPU of a process so far, in ms (from /proc; clock ticks are 10 ms). */
function cpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

function rssMb(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, "utf8")
    .split("\n")
    .find((l) => l.startsWith("VmRSS:"))!;
  return Math.round(Number(line.split(/\s+/)[1]) / 1024);
}

async function startGateway(script: string, env: Record<string, string>): Promise<{ child: ChildProcess; url: string }> {
  const port = await freePort();
  const child = spawn(process.execPath, [...(process.env.BENCH_NODE_OPTIONS ?? "").split(" ").filter(Boolean), script], {
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      ...(process.env.MALLOC_ARENA_MAX ? { MALLOC_ARENA_MAX: process.env.MALLOC_ARENA_MAX } : {}),
      NODE_ENV: "production",
      LOG_LEVEL: "warn",
      PORT: String(port),
      HOST: "127.0.0.1",
      ...env,
    },
    stdio: ["ignore", "inherit", "inherit"],
  });
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 300; i++) {
    if (child.exitCode !== null) throw new Error(`gateway exited with ${child.exitCode}`);
    const ok = await fetch(`${url}/healthz`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) return { child, url };
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error("gateway did not start");
}

interface Scenario {
  key: "list" | "create";
  label: string;
  method: "GET" | "POST";
  path: string;
  body?: string;
}

const SCENARIOS: Scenario[] = [
  { key: "list", label: "GET list", method: "GET", path: PATH },
  { key: "create", label: "POST /client", method: "POST", path: CREATE_PATH, body: NEW_CLIENT },
];

async function main(): Promise<void> {
  const build = spawnSync(process.execPath, [path.join(ROOT, "scripts/build.mjs"), "--if-stale"], { stdio: "inherit" });
  if (build.status !== 0) throw new Error("pnpm build failed");
  const picked = (process.env.BENCH_SCENARIOS ?? "list,create").split(",");
  const scenarios = SCENARIOS.filter((s) => picked.includes(s.key));
  const kv = new RedisKvStore(REDIS_URL);
  await kv.redis.flushdb();
  const stub = await startStub(listPage(), createdRecord());
  const dataDir = mkdtempSync(path.join(os.tmpdir(), "gateway-hop-"));
  const jwtSecret = "bench-jwt-secret-0123456789abcdef0123456789";
  const codec = new AccessTokenCodec(jwtSecret);
  const userId = uuidv7();
  const businessId = uuidv7();
  const jti = uuidv7();
  const sid = uuidv7();
  // What identity writes at sign-in: the allow-list entry and the user's state.
  const cache = new AuthCache(kv);
  await cache.allowAccessToken(jti, sid, 3_600_000);
  await cache.writeUser({ v: 1, userId, deleted: false, businessId, role: "OWNER" });
  const token = codec.sign({ sub: userId, businessId, jti, sid }, 3600);
  const env = {
    REDIS_URL,
    CRM_RECORDS_URL: stub.url,
    IDENTITY_URL: stub.url,
    WEBHOOK_DELIVERY_URL: stub.url,
    JWT_SECRET: jwtSecret,
    INTERNAL_TOKEN_SECRET: "bench-internal-secret-0123456789abcdef012345",
    IDEMPOTENCY_ENCRYPTION_KEY: "bench-idempotency-key-0123456789abcdef01234",
    DATA_DIR: dataDir,
    RATE_LIMIT_MAX: "1000000000",
  };
  const scripts: Array<[string, string]> = [["gateway", process.env.BENCH_GATEWAY_SCRIPT ?? path.join(ROOT, "services/gateway/dist/main.js")]];
  if (process.env.BENCH_GATEWAY_SCRIPT_B) scripts.push(["gateway B", process.env.BENCH_GATEWAY_SCRIPT_B]);
  const gateways: Array<{ name: string; script: string; child: ChildProcess; url: string }> = [];
  const headers = { authorization: `Bearer ${token}` };
  const postHeaders = { ...headers, "content-type": "application/json" };
  try {
    for (const [name, script] of scripts) gateways.push({ name, script, ...(await startGateway(script, env)) });
    for (const g of gateways) {
      for (const s of scenarios) {
        const check = await fetch(g.url + s.path, { method: s.method, headers: s.body ? postHeaders : headers, body: s.body });
        if (check.status >= 300) throw new Error(`${g.name} answered ${check.status} to ${s.label}: ${await check.text()}`);
      }
    }
    // Idle as after start (one request answered), before any load.
    await new Promise((r) => setTimeout(r, 3000));
    const rssIdle = new Map(gateways.map((g) => [g.name, rssMb(g.child.pid!)]));
    const rssPeak = new Map(rssIdle);
    console.log(`${gateways.map((g) => `${g.name} pid ${g.child.pid} (${g.script})`).join("; ")}; warming up ...`);
    const ways = [...gateways.map((g) => ({ name: g.name, url: g.url, pid: g.child.pid })), { name: "direct", url: stub.url, pid: undefined }];
    for (const g of gateways)
      for (const s of scenarios)
        await runLoad({ url: g.url + s.path, method: s.method, headers: s.body ? postHeaders : headers, body: s.body, connections: CONNECTIONS, durationS: 2 });
    const sat = new Map<string, LoadResult[]>();
    const paced = new Map<string, LoadResult[]>();
    const cpu = new Map<string, number[]>();
    const push = <T>(m: Map<string, T[]>, k: string, v: T) => m.set(k, [...(m.get(k) ?? []), v]);
    for (let round = 0; round < ROUNDS; round++) {
      // Alternate the order every round, so no way always runs first (or right after the same other).
      const order = round % 2 ? [...ways].reverse() : ways;
      for (const s of scenarios) {
        for (const way of order) {
          const cpu0 = way.pid ? cpuMs(way.pid) : 0;
          const r = await runLoad({
            url: way.url + s.path,
            method: s.method,
            headers: s.body ? postHeaders : headers,
            body: s.body,
            connections: CONNECTIONS,
            durationS: DURATION_S,
          });
          if (way.pid) {
            push(cpu, `${s.key} ${way.name}`, (cpuMs(way.pid) - cpu0) / (r.rps * DURATION_S));
            rssPeak.set(way.name, Math.max(rssPeak.get(way.name)!, rssMb(way.pid)));
          }
          push(sat, `${s.key} ${way.name}`, r);
        }
      }
      if (!scenarios.some((s) => s.key === "list")) continue;
      const rate = Number(process.env.BENCH_RATE ?? Math.max(1, Math.round(median(sat.get(`list ${gateways[0]!.name}`)!.map((r) => r.rps)) / 2)));
      for (const way of order) push(paced, way.name, await runPaced({ url: way.url + PATH, headers, connections: CONNECTIONS, durationS: DURATION_S, rate }));
    }
    const m = (runs: LoadResult[], k: keyof LoadResult) => median(runs.map((r) => r[k]));
    const line = (label: string, runs: LoadResult[]) =>
      `${label.padEnd(44)}${m(runs, "rps").toFixed(0).padStart(7)} req/s  p50 ${m(runs, "p50").toFixed(2).padStart(6)} ms  p99 ${m(runs, "p99").toFixed(2).padStart(7)} ms${runs.some((r) => r.failures) ? `  failures ${runs.reduce((s, r) => s + r.failures, 0)}` : ""}`;
    const target = (name: string) => (name === "direct" ? "straight to the stub" : `through the ${name}`);
    console.log("");
    console.log(
      `gateway hop: ${CONNECTIONS} connections, ${ROUNDS} rounds x ${DURATION_S} s, medians; ${os.cpus().length} cores, load average ${os.loadavg()[0]!.toFixed(1)}, Node ${process.version}, ${new Date().toISOString()}${process.env.BENCH_NODE_OPTIONS ? `, gateway flags ${process.env.BENCH_NODE_OPTIONS}` : ""}`,
    );
    for (const s of scenarios) for (const way of ways) console.log(line(`${s.label}, saturation, ${target(way.name)}`, sat.get(`${s.key} ${way.name}`)!));
    for (const way of ways) if (paced.has(way.name)) console.log(line(`GET list, paced, ${target(way.name)}`, paced.get(way.name)!));
    for (const s of scenarios) {
      for (const g of gateways) {
        const rounds = cpu.get(`${s.key} ${g.name}`)!;
        console.log(`${`${s.label}, ${g.name} CPU per request`.padEnd(44)}${median(rounds).toFixed(3)} ms (rounds: ${rounds.map((c) => c.toFixed(3)).join(", ")})`);
      }
    }
    for (const g of gateways) {
      if (paced.has(g.name)) console.log(`${`added p50 at the paced rate, ${g.name}`.padEnd(44)}${(m(paced.get(g.name)!, "p50") - m(paced.get("direct")!, "p50")).toFixed(2)} ms`);
    }
    for (const g of gateways) console.log(`${`${g.name} RSS`.padEnd(44)}idle ${rssIdle.get(g.name)} MB (3 s after its first requests), after load ${rssPeak.get(g.name)} MB`);
  } finally {
    for (const g of gateways) {
      g.child.kill("SIGTERM");
      await new Promise((r) => g.child.once("exit", r));
    }
    await stub.close();
    await kv.redis.flushdb();
    await kv.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

runMain(main);
