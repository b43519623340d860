// `pnpm bench:delivery` (issue 15): webhook delivery throughput, latency and fairness, the product
// beside a bare undici + HMAC loop, in one run, alternating, printing rates, ratios and p50/p99.
//
// The product runs as users run it, started by the e2e harness: embedded (one process, PGlite, the
// in-process bus) and distributed (one process per service on the local PostgreSQL and Redis and
// librdkafka's mock Kafka, found or started by @crm/testing). The receiver is on loopback in this process.
//
// 1. Throughput: W webhooks x N client creates = W*N deliveries; rate from the first to the last
//    received. Peer: the same number of signed POSTs to the same receiver at the product's
//    concurrency for one business (2 per webhook, at most WEBHOOK_MAX_IN_FLIGHT_PER_BUSINESS).
// 2. Latency: creates at a fixed rate; create's HTTP response -> the signed POST received, p50/p99.
// 3. Fairness: business A has many webhooks pointing at an endpoint that accepts and never answers
//    (WEBHOOK_TIMEOUT_MS 3 s); business B's deliveries to a healthy endpoint: write -> received.
// 4. Scale-out (distributed): one business, a receiver answering after 50 ms, one webhook-delivery
//    process and then two on the same database and topic, 3 rounds each; ratio of the medians, and
//    deliveries received twice.
//
// Settings (environment; defaults take about 3-4 minutes on an idle 2-core machine):
//   BENCH_MODES=embedded,distributed  BENCH_ROUNDS=7  BENCH_WARMUP_ROUNDS=15  BENCH_WEBHOOKS=10
//   BENCH_CREATES=200
//   BENCH_LATENCY_RATES=20,100  BENCH_LATENCY_S=5  BENCH_FAIR_A_WEBHOOKS=200  BENCH_FAIR_A_CREATES=2
//   BENCH_FAIR_B_EVENTS=20  BENCH_RECEIVER_DELAY_MS=0  BENCH_SCALE_OUT_DELAY_MS=50  BENCH_SCALE_OUT_ROUNDS=3
//   BENCH_CPU_PROF=<dir> (every product process writes a .cpuprofile there)
//   BENCH_NODE_OPTIONS (flags for every product process, e.g. --perf-basic-prof for Linux perf)
//   BENCH_PHASES=throughput,latency,fairness,scale-out (a subset runs only those)
//   Product settings (WEBHOOK_*, KAFKA_FETCH_MAX_WAIT_MS, KAFKA_SESSION_TIMEOUT_MS, ...) in the
//   environment are passed through, e.g. KAFKA_FETCH_MAX_WAIT_MS=5000 for the kafkajs default.
// It prints figures; nothing is asserted. Goals, figures and the machine: docs/performance.md.
import { spawn, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { freePort, startInfra, testInfra } from "@crm/testing";
import { request } from "undici";
import { ROOT, startDistributed, startEmbedded, type RunningDistributed, type RunningProduct } from "../../e2e/harness";
import { runBareLoop } from "./delivery-peer";
import { startBenchReceiver, type BenchReceiver } from "./delivery-receiver";
import { cpuMs, pidListeningOn, runMain, writeCalls } from "./load";
import { probeSettings } from "./bench-product";

const num = (name: string, fallback: number): number => Number(process.env[name] ?? fallback);
const MODES = (process.env.BENCH_MODES ?? "embedded,distributed").split(",").map((m) => m.trim()) as Array<"embedded" | "distributed">;
// Seven timed rounds: on a shared 2-core machine the peer alone moves ~30% from round to round, and a
// median of two is whichever round happened to be quiet (docs/performance.md#method).
const ROUNDS = num("BENCH_ROUNDS", 7);
const WEBHOOKS = num("BENCH_WEBHOOKS", 10);
const CREATES = num("BENCH_CREATES", 200);
const WARMUP_ROUNDS = Math.max(1, num("BENCH_WARMUP_ROUNDS", 15));
const LATENCY_RATES = (process.env.BENCH_LATENCY_RATES ?? "20,100").split(",").map(Number);
const LATENCY_S = num("BENCH_LATENCY_S", 5);
const FAIR_A_WEBHOOKS = num("BENCH_FAIR_A_WEBHOOKS", 200);
const FAIR_A_CREATES = num("BENCH_FAIR_A_CREATES", 2);
const FAIR_B_EVENTS = num("BENCH_FAIR_B_EVENTS", 20);
const RECEIVER_DELAY_MS = num("BENCH_RECEIVER_DELAY_MS", 0);
const SCALE_OUT_DELAY_MS = num("BENCH_SCALE_OUT_DELAY_MS", 50);
const SCALE_OUT_ROUNDS = Math.max(1, num("BENCH_SCALE_OUT_ROUNDS", 3));
const PHASES = new Set((process.env.BENCH_PHASES ?? "throughput,latency,fairness,scale-out").split(",").map((p) => p.trim()));
const PER_WEBHOOK = 2; // the product's in-flight cap per webhook
const PER_BUSINESS = num("WEBHOOK_MAX_IN_FLIGHT_PER_BUSINESS", 20);
// The peer's pool per origin: 16, its faster setting at this receiver (the product's dispatcher pools 32).
const CONNECTIONS_PER_ORIGIN = 16;
const CREATE_CONCURRENCY = 8;
const BENCH_PROCESS = "bench (receiver, API client)";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function percentile(values: number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

async function waitUntil(check: () => boolean, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (check()) return true;
    await sleep(5);
  }
  return check();
}

class Api {
  constructor(
    private readonly base: string,
    private readonly token: string,
    readonly businessId: string,
  ) {}

  static async signUp(baseUrl: string, name: string): Promise<Api> {
    const res = await fetch(`${baseUrl}/api/v1/auth/sign-up`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        businessName: `Bench ${name}`,
        email: `bench-${name}-${Date.now()}-${Math.random().toString(36).slice(2)}@example.test`,
        password: "correct-horse-battery",
      }),
    });
    if (res.status !== 201) throw new Error(`sign-up failed: ${res.status} ${await res.text()}`);
    const { data } = (await res.json()) as { data: { accessToken: string; business: { id: string } } };
    return new Api(`${baseUrl}/api/v1`, data.accessToken, data.business.id);
  }

  /**
   * undici's `request`, not `fetch`: the creates' client runs on the same 2 cores as the product,
   * and with fetch (WHATWG streams, Response objects) this process spent 483-555 µs of CPU per
   * delivery (receiver included) against 252-424 with `request`: 1-2 ms per create the product lacked.
   */
  private async post(path: string, body: object): Promise<{ id: string }> {
    const res = await request(`${this.base}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${this.token}` },
      body: JSON.stringify(body),
    });
    const text = await res.body.text();
    if (res.statusCode !== 201) throw new Error(`POST ${path}: ${res.statusCode} ${text}`);
    return (JSON.parse(text) as { data: { id: string } }).data;
  }

  async webhooks(count: number, url: string): Promise<void> {
    await pool(count, CREATE_CONCURRENCY, (i) => this.post("/webhook", { url: `${url}?w=${i}`, events: ["client.created"] }));
  }

  /** Creates a client; resolves with its id and when the response arrived. */
  async createClient(i: number): Promise<{ id: string; respondedAt: number }> {
    const { id } = await this.post("/client", { firstName: `F${i}`, lastName: "Bench", email: `c${i}@example.test` });
    return { id, respondedAt: performance.now() };
  }
}

async function pool<T>(total: number, concurrency: number, task: (i: number) => Promise<T>): Promise<T[]> {
  const results: T[] = new Array(total);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, total) }, async () => {
      while (next < total) {
        const i = next++;
        results[i] = await task(i);
      }
    }),
  );
  return results;
}

/** A business of its own with W webhooks on `receiver`, for one throughput round. */
async function throughputBusiness(baseUrl: string, receiver: BenchReceiver, round: number | string): Promise<Api> {
  const api = await Api.signUp(baseUrl, `throughput-${round}`);
  await api.webhooks(WEBHOOKS, receiver.okUrl);
  return api;
}

/**
 * W webhooks x N creates: deliveries per second from the first received to the last. The creates go
 * through the gateway and crm-records, so when delivery keeps up with them this is the create rate;
 * the drain rate (deliveries still owed when the last create answered, over the time to deliver them)
 * is delivery alone. `api`: the round's business, its webhooks registered (throughputBusiness).
 */
async function productThroughput(api: Api, receiver: BenchReceiver): Promise<{ rate: number; drain: number; backlog: number; missing: number; twice: number }> {
  const expected = WEBHOOKS * CREATES;
  await pool(CREATES, CREATE_CONCURRENCY, (i) => api.createClient(i));
  const createsDoneAt = performance.now();
  const backlog = expected - receiver.of(api.businessId).length;
  await waitUntil(() => receiver.of(api.businessId).length >= expected, 180_000);
  const got = receiver.of(api.businessId);
  const seconds = (got[got.length - 1]!.at - got[0]!.at) / 1000;
  const drain = backlog > 0 ? backlog / ((got[got.length - 1]!.at - createsDoneAt) / 1000) : NaN;
  // A delivery received twice (a lease lost and the attempt sent again) would also make up a missing one.
  const distinct = new Set(got.map((a) => a.deliveryId)).size;
  return { rate: got.length / seconds, drain, backlog, missing: expected - distinct, twice: got.length - distinct };
}

async function peerThroughput(receiver: BenchReceiver): Promise<number> {
  const body = (i: number) =>
    JSON.stringify({
      event: "client.created",
      data: { id: `peer-${i}`, firstName: `F${i}`, lastName: "Bench", email: `c${i}@example.test` },
      businessId: "peer",
      timestamp: new Date().toISOString(),
    });
  const run = await runBareLoop({
    url: receiver.okUrl,
    total: WEBHOOKS * CREATES,
    concurrency: Math.min(WEBHOOKS * PER_WEBHOOK, PER_BUSINESS),
    connectionsPerOrigin: CONNECTIONS_PER_ORIGIN,
    body,
  });
  if (run.failures) console.log(`  peer: ${run.failures} non-2xx`);
  return run.sent / run.seconds;
}

/** Creates at `rate` per second for LATENCY_S; create response -> POST received, per event. */
async function latency(baseUrl: string, receiver: BenchReceiver, rate: number): Promise<{ p50: number; p99: number; max: number; missing: number }> {
  const api = await Api.signUp(baseUrl, `latency-${rate}`);
  await api.webhooks(1, receiver.okUrl);
  // One event end to end first, untimed: in a run without the throughput phase the first events
  // otherwise wait for the consumer's first group join (the mock, like a broker's
  // group.initial.rebalance.delay.ms, holds a new group's first join for 3 s): p99 1.5-1.9 s at 20/s.
  const first = await api.createClient(-1);
  await waitUntil(() => receiver.of(api.businessId).some((a) => a.recordId === first.id), 30_000);
  const total = Math.round(rate * LATENCY_S);
  const started = performance.now();
  const creates: Array<Promise<{ id: string; respondedAt: number }>> = [];
  for (let i = 0; i < total; i++) {
    const due = started + (i * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 0) await sleep(wait);
    creates.push(api.createClient(i));
  }
  const done = await Promise.all(creates);
  await waitUntil(() => receiver.of(api.businessId).length >= total + 1, 60_000);
  const arrivedAt = new Map(receiver.of(api.businessId).map((a) => [a.recordId, a.at]));
  const latencies = done.filter((c) => arrivedAt.has(c.id)).map((c) => Math.max(0, arrivedAt.get(c.id)! - c.respondedAt));
  return { p50: percentile(latencies, 50), p99: percentile(latencies, 99), max: Math.max(...latencies), missing: total - latencies.length };
}

/** A's many webhooks hang; B's deliveries to a healthy endpoint: create response -> received. */
async function fairness(baseUrl: string, receiver: BenchReceiver, hanging: BenchReceiver): Promise<{ p50: number; max: number; missing: number }> {
  const a = await Api.signUp(baseUrl, "fair-a");
  const b = await Api.signUp(baseUrl, "fair-b");
  await a.webhooks(FAIR_A_WEBHOOKS, hanging.hangUrl);
  await b.webhooks(1, receiver.okUrl);
  await pool(FAIR_A_CREATES, CREATE_CONCURRENCY, (i) => a.createClient(i));
  await sleep(1_000); // A's attempts are hanging by now
  const done: Array<{ id: string; respondedAt: number }> = [];
  for (let i = 0; i < FAIR_B_EVENTS; i++) {
    done.push(await b.createClient(i));
    await sleep(50);
  }
  await waitUntil(() => receiver.of(b.businessId).length >= FAIR_B_EVENTS, 150_000);
  const arrivedAt = new Map(receiver.of(b.businessId).map((x) => [x.recordId, x.at]));
  const latencies = done.filter((c) => arrivedAt.has(c.id)).map((c) => Math.max(0, arrivedAt.get(c.id)! - c.respondedAt));
  return { p50: percentile(latencies, 50), max: latencies.length ? Math.max(...latencies) : NaN, missing: FAIR_B_EVENTS - latencies.length };
}

/** Product settings from the environment, so a run can compare e.g. KAFKA_FETCH_MAX_WAIT_MS values. */
function passedThroughSettings(): Record<string, string> {
  return Object.fromEntries(Object.entries(process.env).filter(([k, v]) => v !== undefined && /^(WEBHOOK_|KAFKA_(FETCH|SESSION|HEARTBEAT))/.test(k))) as Record<string, string>;
}

/** Attempts a webhook-delivery process has made, whatever their outcome (its crm_webhook_attempts_total). */
async function attemptsSent(serviceUrl: string): Promise<number> {
  const text = await (await fetch(`${serviceUrl}/metrics`)).text();
  let total = 0;
  for (const line of text.split("\n")) if (line.startsWith("crm_webhook_attempts_total{")) total += Number(line.slice(line.lastIndexOf(" ") + 1));
  return total;
}

/** The sum of a metric's series in a process's `/metrics` (0 when absent). */
async function metricTotal(url: string, name: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  let total = 0;
  for (const line of text.split("\n")) if (line.startsWith(`${name} `) || line.startsWith(`${name}{`)) total += Number(line.slice(line.lastIndexOf(" ") + 1));
  return total;
}

/** The outbox relay's publish requests and rows so far (distributed: crm-records' own /metrics). */
async function relayCounters(product: RunningProduct): Promise<{ batches: number; rows: number } | undefined> {
  if (!("services" in product)) return undefined;
  const url = (product as RunningDistributed).services["crm-records"].url;
  try {
    const [batches, rows] = await Promise.all([metricTotal(url, "crm_outbox_publish_batches_total"), metricTotal(url, "crm_outbox_published_total")]);
    return { batches, rows };
  } catch {
    return undefined;
  }
}

/** A second webhook-delivery process on the same database and topic, as a scaled-out deployment runs. */
async function startSecondWorker(product: RunningDistributed, extra: Record<string, string>): Promise<{ url: string; stop: () => Promise<void> }> {
  const port = await freePort();
  const { PATH, HOME, LANG } = process.env;
  const dataDir = mkdtempSync(path.join(os.tmpdir(), "bench-worker-"));
  const child = spawn(process.execPath, ["services/webhook-delivery/dist/main.js"], {
    cwd: ROOT,
    stdio: ["ignore", "ignore", "inherit"],
    env: {
      PATH,
      HOME,
      LANG,
      NODE_ENV: "production",
      LOG_LEVEL: "warn",
      WEBHOOK_ALLOW_PRIVATE_TARGETS: "true",
      ...extra,
      DATABASE_URL: product.services["webhook-delivery"].databaseUrl,
      KAFKA_BROKERS: testInfra.kafkaBrokers!,
      INTERNAL_TOKEN_SECRET: product.internalTokenSecret,
      DATA_DIR: dataDir,
      PORT: String(port),
      HOST: "127.0.0.1",
    },
  });
  const ready = await waitUntilAsync(async () => (await fetch(`http://127.0.0.1:${port}/readyz`).catch(() => undefined))?.status === 200, 60_000);
  if (!ready) throw new Error("second webhook-delivery worker did not become ready");
  return {
    url: `http://127.0.0.1:${port}`,
    stop: async () => {
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGTERM");
      await exited;
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

async function waitUntilAsync(check: () => Promise<boolean>, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return true;
    await sleep(100);
  }
  return false;
}

/**
 * One business, W webhooks, a receiver answering after SCALE_OUT_DELAY_MS: SCALE_OUT_ROUNDS rounds with
 * one worker, then as many with two; the ratio of the medians: with one round each, which side of the
 * goal a run landed on was the round's luck.
 */
async function scaleOut(product: RunningDistributed, extra: Record<string, string>): Promise<void> {
  const slow = await startBenchReceiver({ delayMs: SCALE_OUT_DELAY_MS });
  let stopSecond: (() => Promise<void>) | undefined;
  try {
    const one: Array<{ rate: number; drain: number; missing: number }> = [];
    for (let round = 1; round <= SCALE_OUT_ROUNDS; round++) one.push(await productThroughput(await throughputBusiness(product.baseUrl, slow, `scale-1-${round}`), slow));
    const second = await startSecondWorker(product, extra);
    stopSecond = second.stop;
    // Its readiness does not wait for the consumer group join: wait for the join and the rebalance it
    // starts (the broker's ~3 s rebalance delay, then each member's next heartbeat), so the second
    // run measures two settled workers, not a paused consumer group.
    await sleep(8_000);
    // The first worker is warm from the rounds before; the second is not: one untimed round first, so
    // the ratio compares two warm workers with one.
    await productThroughput(await throughputBusiness(product.baseUrl, slow, "scale-2-warm-up"), slow);
    const workers = [product.services["webhook-delivery"].url, second.url];
    const attemptsBefore = await Promise.all(workers.map(attemptsSent));
    const two: typeof one = [];
    for (let round = 1; round <= SCALE_OUT_ROUNDS; round++) two.push(await productThroughput(await throughputBusiness(product.baseUrl, slow, `scale-2-${round}`), slow));
    const attemptsBy = (await Promise.all(workers.map(attemptsSent))).map((n, i) => n - attemptsBefore[i]!);
    const perDelivery = new Map<string, number>();
    for (const a of slow.arrivals) perDelivery.set(a.deliveryId, (perDelivery.get(a.deliveryId) ?? 0) + 1);
    const duplicates = [...perDelivery.values()].filter((n) => n > 1).length;
    const missing = [...one, ...two].reduce((sum, r) => sum + r.missing, 0);
    const rates = (rounds: typeof one) => rounds.map((r) => r.rate.toFixed(0)).join(" ");
    const [oneRate, twoRate] = [median(one.map((r) => r.rate)), median(two.map((r) => r.rate))];
    const [oneDrain, twoDrain] = [median(one.map((r) => r.drain)), median(two.map((r) => r.drain))];
    console.log(`  rounds: 1 worker /s ${rates(one)}   2 workers /s ${rates(two)}`);
    console.log(
      `  1 worker ${oneRate.toFixed(0).padStart(6)} /s (drain ${oneDrain.toFixed(0)})   2 workers ${twoRate.toFixed(0).padStart(6)} /s (drain ${twoDrain.toFixed(0)})   ratio ${(twoRate / oneRate).toFixed(2)} (drain ${(twoDrain / oneDrain).toFixed(2)}; medians of ${SCALE_OUT_ROUNDS} rounds)   goal >= 1.6   deliveries received twice: ${duplicates}${missing ? `   MISSING ${missing}` : ""}`,
    );
    console.log(`  attempts sent in the two-worker rounds: consuming worker ${attemptsBy[0]}, second worker ${attemptsBy[1]}`);
  } finally {
    await stopSecond?.();
    await slow.close();
  }
}

const ms = (v: number) => `${v.toFixed(0).padStart(5)} ms`;

async function benchMode(mode: "embedded" | "distributed", receiver: BenchReceiver, hanging: BenchReceiver): Promise<void> {
  const extra: Record<string, string> = {
    RATE_LIMIT_MAX: "1000000000",
    LOG_LEVEL: "warn",
    WEBHOOK_TIMEOUT_MS: "3000",
    // Shared by every webhook-delivery process (the scale-out worker too), as a deployment would.
    WEBHOOK_SECRET_KEYS: randomBytes(32).toString("hex"),
    ...passedThroughSettings(),
    ...probeSettings(),
  };
  console.log(`\n== ${mode} ==  (starting the product ...)`);
  const product: RunningProduct & { dataDir?: string } = mode === "embedded" ? await startEmbedded(extra) : await startDistributed(extra);
  try {
    if (PHASES.has("throughput")) await throughputPhase(product, receiver);
    if (PHASES.has("latency")) {
      console.log(`-- latency: create response -> signed POST received (${LATENCY_S} s per rate)`);
      for (const rate of LATENCY_RATES) {
        const l = await latency(product.baseUrl, receiver, rate);
        console.log(`  ${String(rate).padStart(4)} events/s: p50 ${ms(l.p50)}   p99 ${ms(l.p99)}   max ${ms(l.max)}${l.missing ? `   MISSING ${l.missing}` : ""}`);
      }
    }
    if (PHASES.has("fairness")) {
      console.log(
        `-- fairness: A has ${FAIR_A_WEBHOOKS} webhooks on an endpoint that never answers (${FAIR_A_CREATES} creates = ${FAIR_A_WEBHOOKS * FAIR_A_CREATES} hanging deliveries); B ${FAIR_B_EVENTS} events to a healthy endpoint`,
      );
      const f = await fairness(product.baseUrl, receiver, hanging);
      console.log(`  B write -> received: p50 ${ms(f.p50)}   max ${ms(f.max)}   goal max <= 1000 ms${f.missing ? `   MISSING ${f.missing} (still undelivered)` : ""}`);
    }
    if (mode === "distributed" && PHASES.has("scale-out")) {
      console.log(
        `-- scale-out: one business, ${WEBHOOKS} webhooks x ${CREATES} creates, receiver answering after ${SCALE_OUT_DELAY_MS} ms; one webhook-delivery process, then two`,
      );
      await scaleOut(product as RunningDistributed, extra);
    }
  } finally {
    await product.stop().catch((err) => console.error(String(err)));
    // The embedded product's database (~150 MB a run; the harness leaves it to its caller).
    if (product.dataDir) rmSync(product.dataDir, { recursive: true, force: true });
  }
}

/**
 * CPU spent so far (ms) by each product process (found by its listening port), by the PostgreSQL
 * backends serving the product's databases (distributed), and by this process (receiver and peer):
 * per delivery, these say where the work is, which a busy machine disturbs far less than rates.
 */
interface CpuSnapshot {
  processes: Map<string, number>;
  /** By backend pid: pools open and close connections, so a round's backends are matched by pid. */
  backends: Map<number, number>;
  /** Write system calls so far, by the same names, and by backend pid. */
  writes: Map<string, number>;
  backendWrites: Map<number, number>;
}

function serverPids(product: RunningProduct): Map<string, number> {
  const pids = new Map<string, number>();
  const portOf = (url: string) => Number(new URL(url).port);
  pids.set("services" in product ? "gateway" : "product", pidListeningOn(portOf(product.baseUrl)));
  if ("services" in product) {
    for (const [name, service] of Object.entries((product as RunningDistributed).services)) pids.set(name, pidListeningOn(portOf(service.url)));
  }
  return pids;
}

function postgresBackends(product: RunningProduct): number[] {
  if (!("services" in product)) return [];
  const databases = Object.values((product as RunningDistributed).services).map((s) => new URL(s.databaseUrl).pathname.slice(1));
  const out = spawnSync("psql", ["-h", "127.0.0.1", "-U", "postgres", "-Atc", `SELECT pid FROM pg_stat_activity WHERE datname IN (${databases.map((d) => `'${d}'`).join(",")})`]);
  return out.status === 0 ? String(out.stdout).split("\n").filter(Boolean).map(Number) : [];
}

/**
 * Statistics for every service database after the warm-up, as autovacuum keeps them on a deployed
 * product. Each run starts from empty tables that autovacuum does not analyze within the run, so the
 * pools' prepared statements kept the generic plans they chose on a nearly empty table: sequential
 * scans of Delivery in most outcome statements. ANALYZE invalidates
 * those plans, so the rounds run on plans chosen for a table with rows.
 */
function analyzeDatabases(product: RunningProduct): void {
  if (!("services" in product)) return;
  const databases = new Set(Object.values((product as RunningDistributed).services).map((s) => new URL(s.databaseUrl).pathname.slice(1)));
  for (const database of databases) spawnSync("psql", ["-h", "127.0.0.1", "-U", "postgres", "-d", database, "-qc", "ANALYZE"]);
}

/**
 * Transactions committed in webhook-delivery's database: every statement it sends runs in its own
 * (no explicit transactions on the delivery path), so the difference is its statements. PostgreSQL
 * publishes these counters up to a second late, so read them after a pause.
 */
function deliveryTransactions(product: RunningProduct): number | undefined {
  if (!("services" in product)) return undefined;
  const database = new URL((product as RunningDistributed).services["webhook-delivery"].databaseUrl).pathname.slice(1);
  const out = spawnSync("psql", ["-h", "127.0.0.1", "-U", "postgres", "-Atc", `SELECT xact_commit + xact_rollback FROM pg_stat_database WHERE datname = '${database}'`]);
  return out.status === 0 ? Number(String(out.stdout).trim()) : undefined;
}

function cpuSnapshot(pids: Map<string, number>, backends: number[]): CpuSnapshot {
  const processes = new Map<string, number>();
  const writes = new Map<string, number>();
  for (const [name, pid] of pids) {
    processes.set(name, cpuMs(pid));
    writes.set(name, writeCalls(pid));
  }
  const backendCpu = new Map<number, number>();
  const backendWrites = new Map<number, number>();
  for (const pid of backends) {
    try {
      backendCpu.set(pid, cpuMs(pid));
      backendWrites.set(pid, writeCalls(pid));
    } catch {
      /* a backend that ended meanwhile */
    }
  }
  const own = process.cpuUsage();
  processes.set(BENCH_PROCESS, (own.user + own.system) / 1000);
  writes.set(BENCH_PROCESS, writeCalls("self"));
  return { processes, backends: backendCpu, writes, backendWrites };
}

/**
 * How much a counter grew between two snapshots, by process in snapshot order, with PostgreSQL's
 * backends summed as "postgres" just before the bench's own process (the last one).
 */
function growthByProcess(
  before: { byName: Map<string, number>; byBackend: Map<number, number> },
  after: { byName: Map<string, number>; byBackend: Map<number, number> },
): Array<[string, number]> {
  const rows = [...after.byName].map(([name, total]): [string, number] => [name, total - (before.byName.get(name) ?? 0)]);
  if (after.byBackend.size > 0) {
    let postgres = 0;
    for (const [pid, total] of after.byBackend) postgres += total - (before.byBackend.get(pid) ?? 0);
    rows.splice(rows.length - 1, 0, ["postgres", postgres]);
  }
  return rows;
}

const cpuOf = (snapshot: CpuSnapshot) => ({ byName: snapshot.processes, byBackend: snapshot.backends });
const writesOf = (snapshot: CpuSnapshot) => ({ byName: snapshot.writes, byBackend: snapshot.backendWrites });

/** Write system calls per delivery, by process (PostgreSQL's backends summed, WAL writes included). */
function writesPerDelivery(before: CpuSnapshot, after: CpuSnapshot, deliveries: number): string {
  return growthByProcess(writesOf(before), writesOf(after))
    .map(([name, calls]) => `${name} ${(calls / deliveries).toFixed(2)}`)
    .join(", ");
}

/**
 * PostgreSQL's share: each backend's CPU since the first snapshot (all of it for one that started
 * since). A backend that ended in between took its CPU since the first snapshot with it: counted as
 * none, and said (summing whichever backends were alive at each end once printed a negative figure).
 */
function cpuPerDelivery(before: CpuSnapshot, after: CpuSnapshot, deliveries: number): string {
  const ended = [...before.backends.keys()].filter((pid) => !after.backends.has(pid)).length;
  return growthByProcess(cpuOf(before), cpuOf(after))
    .map(([name, ms]) => {
      const note = name === "postgres" && ended > 0 ? ` (at least: ${ended} backends ended meanwhile)` : "";
      return `${name} ${((1000 * ms) / deliveries).toFixed(0)}${note}`;
    })
    .join(", ");
}

/** The product's CPU over a round, in ms: its processes and PostgreSQL's backends, not the bench's own process. */
function productCpuMs(before: CpuSnapshot, after: CpuSnapshot): number {
  let ms = 0;
  for (const [name, grown] of growthByProcess(cpuOf(before), cpuOf(after))) if (name !== BENCH_PROCESS) ms += grown;
  return ms;
}

/** The median proper of per-round figures (percentile() takes the upper middle value, which with 2 rounds is the better one). */
function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length / 2;
  return sorted.length % 2 ? sorted[Math.floor(mid)]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** "median (rounds min-max<detail>)" of per-round figures. */
function medianAndSpread(values: number[], detail = ""): string {
  const middle = median(values).toFixed(2);
  return values.length > 1 ? `${middle} (rounds ${Math.min(...values).toFixed(2)}-${Math.max(...values).toFixed(2)}${detail})` : middle;
}

async function throughputPhase(product: RunningProduct, receiver: BenchReceiver): Promise<void> {
  console.log(
    `-- throughput: ${WEBHOOKS} webhooks x ${CREATES} creates = ${WEBHOOKS * CREATES} deliveries, receiver delay ${RECEIVER_DELAY_MS} ms; peer at ${Math.min(WEBHOOKS * PER_WEBHOOK, PER_BUSINESS)} in flight`,
  );
  // Untimed rounds first. The peer's rate rose 7,000 -> 11,000 -> 16,000 /s over three cold rounds
  // (JIT), and the product's first round waited for its consumer's first fetch. The product's
  // processes cost about twice their settled CPU per request until V8 has optimised their hot paths,
  // which takes some thousands of requests, not seconds: the timed rounds come after WARMUP_ROUNDS
  // rounds' worth of creates. The timed rounds' businesses and webhooks are registered before the
  // warm-up, so the timed rounds hold creates and deliveries only: a sign-up and webhook registrations
  // just before the timed creates left the services re-optimising, within the timed window, code those
  // different requests had deoptimised.
  const timedBusinesses: Api[] = [];
  for (let round = 1; round <= ROUNDS; round++) timedBusinesses.push(await throughputBusiness(product.baseUrl, receiver, round));
  // The peer is warmed as long: after one untimed round its CPU per delivery still halved over the
  // timed rounds, so early ratios compared a warm product with a cold peer. It is warmed first, so that the product's warm-up runs right up to the timed
  // rounds: after the peer's warm-up (10-30 s) the services' database pools had closed their idle
  // connections, and opening them again in the first timed round deoptimised the pg driver's code.
  const peerWarmUp: string[] = [];
  for (let round = 1; round <= WARMUP_ROUNDS; round++) peerWarmUp.push((await peerThroughput(receiver)).toFixed(0));
  console.log(`  peer warm-up (${WARMUP_ROUNDS} untimed rounds): peer /s ${peerWarmUp.join(" ")}`);
  // The relay's counters are read once, halfway through the warm-up, not around each timed round: a
  // scrape of crm-records' /metrics (a new connection, a request unlike the creates) deoptimises its
  // HTTP and stream code, and re-optimising it doubled its JIT compiles during the timed rounds; read
  // right before the first timed round, or before the last warm-up round, it still left crm-records
  // optimising its HTTP code again in the timed rounds. The statistics are taken then too.
  let relayBefore: { batches: number; rows: number } | undefined;
  const warmUp: string[] = [];
  for (let round = 1; round <= WARMUP_ROUNDS; round++) {
    if (round === Math.ceil(WARMUP_ROUNDS / 2)) {
      analyzeDatabases(product);
      relayBefore = await relayCounters(product);
    }
    const w = await productThroughput(await throughputBusiness(product.baseUrl, receiver, `warm-up-${round}`), receiver);
    warmUp.push(w.rate.toFixed(0));
  }
  console.log(`  warm-up (${WARMUP_ROUNDS} untimed rounds, ${WARMUP_ROUNDS * CREATES} creates): product /s ${warmUp.join(" ")}`);
  const ratios: number[] = [];
  // The product's CPU per delivery over the peer's, per round: it moves much less with the machine's
  // speed than the rates do, so it is what to compare between two builds (docs/performance.md#method).
  const cpuRatios: number[] = [];
  for (let round = 1; round <= ROUNDS; round++) {
    // Backends are listed each round: pools open and close connections.
    const pids = serverPids(product);
    await sleep(1_100);
    const transactionsBefore = deliveryTransactions(product);
    const cpuBefore = cpuSnapshot(pids, postgresBackends(product));
    const p = await productThroughput(timedBusinesses[round - 1]!, receiver);
    const cpuAfter = cpuSnapshot(pids, postgresBackends(product));
    await sleep(1_100);
    const transactionsAfter = deliveryTransactions(product);
    const peerCpuBefore = process.cpuUsage();
    const peerWritesBefore = writeCalls("self");
    const peer = await peerThroughput(receiver);
    const peerCpu = process.cpuUsage(peerCpuBefore);
    const peerWrites = writeCalls("self") - peerWritesBefore;
    ratios.push(p.rate / peer);
    cpuRatios.push(productCpuMs(cpuBefore, cpuAfter) / ((peerCpu.user + peerCpu.system) / 1000));
    console.log(
      `  round ${round}: product ${p.rate.toFixed(0).padStart(6)} /s (drain ${p.drain.toFixed(0)} /s of a backlog of ${p.backlog})   peer ${peer.toFixed(0).padStart(6)} /s   ratio ${(p.rate / peer).toFixed(2)} (drain ${(p.drain / peer).toFixed(2)})${p.missing ? `   MISSING ${p.missing}` : ""}${p.twice ? `   RECEIVED TWICE ${p.twice}` : ""}`,
    );
    const deliveries = WEBHOOKS * CREATES;
    console.log(
      `    CPU µs per delivery (creates included): ${cpuPerDelivery(cpuBefore, cpuAfter, deliveries)}; peer ${((peerCpu.user + peerCpu.system) / deliveries).toFixed(0)} (sender and receiver)`,
    );
    console.log(`    write system calls per delivery: ${writesPerDelivery(cpuBefore, cpuAfter, deliveries)}; peer ${(peerWrites / deliveries).toFixed(2)} (sender and receiver)`);
    if (transactionsBefore !== undefined && transactionsAfter !== undefined) {
      console.log(`    webhook-delivery statements per delivery: ${((transactionsAfter - transactionsBefore) / deliveries).toFixed(2)} (its database's transactions)`);
    }
  }
  const relayAfter = await relayCounters(product);
  if (relayBefore && relayAfter && relayAfter.batches > relayBefore.batches) {
    const rows = relayAfter.rows - relayBefore.rows;
    const batches = relayAfter.batches - relayBefore.batches;
    console.log(
      `  outbox relay over the second half of the warm-up and the timed rounds: ${batches} publish requests for ${rows} events (${(rows / batches).toFixed(1)} a request)`,
    );
  }
  console.log(`  CPU per delivery, product over peer (median of rounds): ${medianAndSpread(cpuRatios)}`);
  const atGoal = `, ${ratios.filter((r) => r >= 0.5).length} of ${ratios.length} at 0.5 or more`;
  console.log(`  throughput ratio product/peer (median of rounds): ${medianAndSpread(ratios, atGoal)}   goal >= 0.5`);
}

async function main(): Promise<void> {
  console.log(`node ${process.version}, ${os.cpus().length} cores, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB, ${new Date().toISOString()}`);
  const build = spawnSync("node", ["scripts/build.mjs", "--if-stale"], { cwd: ROOT, stdio: "inherit" });
  if (build.status !== 0) throw new Error("pnpm build failed");
  const infra = MODES.includes("distributed") ? await startInfra((line) => console.log(line)) : undefined;
  if (infra) {
    if (!infra.databaseUrl || !infra.redisUrl || !infra.kafkaBrokers) throw new Error("distributed mode needs PostgreSQL, Redis and Kafka (or kcat)");
    // What jest's global setup would hand the e2e harness.
    Object.assign(testInfra, { databaseUrl: infra.databaseUrl, redisUrl: infra.redisUrl, kafkaBrokers: infra.kafkaBrokers });
  }
  const receiver = await startBenchReceiver({ delayMs: RECEIVER_DELAY_MS });
  // Business A's endpoint is another origin, as another company's would be.
  const hanging = await startBenchReceiver({ delayMs: 0 });
  try {
    for (const mode of MODES) await benchMode(mode, receiver, hanging);
  } finally {
    await receiver.close();
    await hanging.close();
    await infra?.stop();
  }
}

runMain(main);
