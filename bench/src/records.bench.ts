// `pnpm bench:records` (issue 9): the product's list and write paths beside a hand-written
// Fastify + pg peer, in one run, alternating, printing req/s, p50/p99 and the ratio of every goal.
//
// The product runs in distributed mode as separate processes (gateway, identity, crm-records,
// webhook-delivery) on the local PostgreSQL and Redis and librdkafka's mock Kafka, started exactly
// as the e2e suite starts it. Each size gets its own business, seeded with bulk SQL with the rows
// the product would have written. Three ways in: through the gateway with a JWT, straight to
// crm-records with a signed internal token, and the peer (same SQL, same rows, its own indexes).
//
// Settings (environment): BENCH_SIZES=1000,10000,100000  BENCH_DURATION_S=3  BENCH_ROUNDS=2
// BENCH_CONNECTIONS=20  BENCH_WARMUP_S=10 (each way's first row of each method; 1 s for later rows)
// BENCH_PREROLL_S=2 (an untimed run of the same way and row right before each timed one; 0: none)
// BENCH_FIRST_PREROLL_S=5 (the same before the first round's runs)
// BENCH_CPU_PROF=<dir> (every product process writes a .cpuprofile there)
// BENCH_SCENARIOS=<keys> (only the rows whose key starts with one of these, e.g. `create` or
// `default-1000,hop`; `create` also selects `create-cf20`, a create with twenty custom field values; `hop` is the paced half-rate run, `deep` the four deep-page rows, `cf` the
// custom-field rows: eq, sort, range and filter + sort against the built-in twin, and issue 39's size goal,
// that custom list at 1,000 clients against the largest size by cursor and by page 1 with its total; only the sizes those rows need are seeded), so one row can be measured and profiled alone.
// Besides req/s it prints each process's CPU per request (user + system from /proc), which a busy
// machine disturbs far less than throughput.
// BENCH_GATEWAY_B=<folder named gateway holding another build's dist/main.js> starts a second gateway
// on the same services beside the first and drives it as a fourth way in every round (alternating
// with the others), so two builds of the gateway are compared in one run: e.g. copy
// services/gateway/dist to <repo>/.ab/gateway/dist: the bundle requires its packages by relative paths
// (../../../node_modules), so the copy must sit two folders below the repository root.
// It prints figures; nothing is asserted. Figures and the machine they came from: docs/performance.md.
import { readdirSync, readFileSync } from "node:fs";
import os from "node:os";
import { Client } from "pg";
import { startBenchProduct } from "./bench-product";
import { cpuMs, median, pidListeningOn, runLoad, runPaced, type LoadResult, runMain } from "./load";
import { spawnPeer } from "./peer-process";
import { signUp, type Caller, type Way } from "./records-caller";
import { ACTIVE_FIELD, CF20_FIELDS, defineClientFields, seedCustomFieldBusiness } from "./records-custom-fields";
import { preparePeerTables, seededLastName, seedClients } from "./records-seed";

const SIZES = (process.env.BENCH_SIZES ?? "1000,10000,100000").split(",").map(Number);
const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 3);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 20);
/**
 * Warm-up of each way the first time it serves a method (GET, POST), before any row is measured; every
 * later row gets 1 s. A server's code for a new path takes thousands of requests to reach V8's
 * optimising tiers: with a 1 s warm-up a two-round run measured mostly the warm-up.
 */
const WARMUP_S = Number(process.env.BENCH_WARMUP_S ?? 10);
/**
 * An untimed run of the same way and row right before each timed one, so each timed run starts on
 * a product that was just serving that load. Without it the gateway's first round was the lowest
 * in every run: it was the only timed run that followed an idle spell (the other ways' warm-ups), in
 * which crm-records' pg pool closed its idle connections and the gateway ran V8's memory reducer.
 */
const PREROLL_S = Number(process.env.BENCH_PREROLL_S ?? 2);
/** The first round's: recovering from the first idle spell took more than 3 s of load in a probe. */
const FIRST_PREROLL_S = Number(process.env.BENCH_FIRST_PREROLL_S ?? 5);
const POOL_SIZE = 10; // the product's default pool per service; the peer gets the same
const SELECTED = process.env.BENCH_SCENARIOS?.split(",")
  .map((k) => k.trim())
  .filter(Boolean);
/** Whether a row (or `hop`, `deep`) was asked for: every row when BENCH_SCENARIOS is unset. */
const wanted = (key: string, group?: string) => !SELECTED || SELECTED.some((k) => key.startsWith(k) || k === group);

/** The custom-field rows with a built-in twin: `cf-builtin-<kind>` against `cf-custom-<kind>`. */
const CF_KINDS = ["eq", "sort", "range", "both"];
/** The smaller business of issue 39's size goal: a custom-field list there against the same at the largest size. */
const CF_SMALL_SIZE = 1000;
const FILTERED = "/api/v1/client?where=isActive:bool(true)&orderBy=lastName:asc&perPage=20&include=-contacts";
const DEFAULT = "/api/v1/client?perPage=20&include=-contacts";
const NEW_CLIENT = JSON.stringify({ firstName: "Grace", lastName: "Hopper", email: "grace@example.test", companyName: "Navy" });

const GATEWAY_B = process.env.BENCH_GATEWAY_B;
const WAYS: Way[] = GATEWAY_B ? ["gateway", "gatewayB", "direct", "peer"] : ["gateway", "direct", "peer"];

interface Scenario {
  key: string;
  label: string;
  method: "GET" | "POST";
  path: string;
  caller: Caller;
  ways: Way[];
  /** A deep-page row (extensions E2.1): offset vs cursor at page 1 and the last page, product only. */
  deep?: boolean;
  /** A custom-field row (extensions E4): a query on `customFields.code` against the same on `lastName`, product only. */
  custom?: boolean;
  /** A POST's body when not NEW_CLIENT. */
  body?: string;
}

const NEW_CLIENT_CF20 = JSON.stringify({ ...JSON.parse(NEW_CLIENT), customFields: Object.fromEntries(CF20_FIELDS.map((f) => [f.definition["key"], f.value])) });

/**
 * The page after page `page` of the list `query` (its where and orderBy, or nothing), by cursor: the path
 * of the request that reads it, with the cursor the offset page answered (read through the gateway).
 */
async function cursorPathAfter(baseUrl: string, caller: Caller, query: string, page: number): Promise<string> {
  const res = await fetch(`${baseUrl}/api/v1/client?${query ? `${query}&` : ""}perPage=20&include=-contacts&page=${page}`, { headers: caller.headers.gateway });
  const body = (await res.json()) as { meta: { nextCursor: string | null } };
  if (!body.meta.nextCursor) throw new Error(`no cursor after page ${page} of ${query}`);
  return `/api/v1/client?perPage=20&include=-contacts&cursor=${encodeURIComponent(body.meta.nextCursor)}`;
}

function fmt(r: LoadResult | undefined): string {
  if (!r) return "".padEnd(34);
  return `${r.rps.toFixed(0).padStart(6)} req/s p50 ${r.p50.toFixed(1).padStart(6)} p99 ${r.p99.toFixed(1).padStart(6)}${r.failures ? ` !${r.failures}` : ""}`.padEnd(34);
}

/** User + system CPU so far of each process whose command is `comm` (`postgres`: the server and all its backends), ms by pid. */
function cpuByPid(comm: string): Map<number, number> {
  const ms = new Map<number, number>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      if (stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")")) !== comm) continue;
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      ms.set(Number(entry), (Number(fields[11]) + Number(fields[12])) * 10);
    } catch {
      /* gone meanwhile */
    }
  }
  return ms;
}

/**
 * CPU spent between two snapshots by the processes alive at the second: one that exited meanwhile (a
 * closed connection's PostgreSQL backend) is left out, so the figure errs low, never below zero.
 */
function spentSince(before: ReadonlyMap<number, number>, after: ReadonlyMap<number, number>): number {
  let ms = 0;
  for (const [pid, now] of after) ms += now - (before.get(pid) ?? 0);
  return ms;
}

/** CPU the whole machine has spent so far (every process, all cores; not idle or waiting for I/O), ms (/proc/stat). */
function machineBusyMs(): number {
  const ticks = readFileSync("/proc/stat", "utf8").split("\n")[0]!.trim().split(/\s+/).slice(1).map(Number);
  return (ticks.reduce((a, b) => a + b, 0) - ticks[3]! - ticks[4]!) * 10;
}

function ratio(a: number | undefined, b: number | undefined): string {
  return a !== undefined && b ? (a / b).toFixed(2) : "-";
}

async function main(): Promise<void> {
  const { infra, product } = await startBenchProduct();
  const records = product.services["crm-records"];
  const db = new Client({ connectionString: records.databaseUrl });
  let peer: Awaited<ReturnType<typeof spawnPeer>> | undefined;
  try {
    await db.connect();
    const callers = new Map<number, Caller>();
    const deepSize = Math.max(...SIZES);
    const deepPage = Math.floor(deepSize / 20);
    const hopKey = `default-${Math.min(...SIZES)}`;
    const deepWanted = !SELECTED || SELECTED.some((k) => k === "deep" || ["offset-page", "cursor-page"].some((row) => row.startsWith(k) || k.startsWith(row)));
    const cfWanted = !SELECTED || SELECTED.some((k) => k.startsWith("cf") || "cf-".startsWith(k));
    const needed = (size: number) =>
      wanted(`filtered-${size}`) || wanted(`default-${size}`) || (size === deepSize && deepPage >= 2 && deepWanted) || (`default-${size}` === hopKey && wanted("hop"));
    for (const size of SIZES.filter(needed)) {
      const caller = await signUp(product.baseUrl, String(size), product.internalTokenSecret);
      const t0 = Date.now();
      await seedClients(db, caller.businessId, size);
      console.log(`seeded ${size.toLocaleString("en-US")} clients in ${Date.now() - t0} ms`);
      callers.set(size, caller);
    }
    const writer = await signUp(product.baseUrl, "writes", product.internalTokenSecret);
    await preparePeerTables(db);
    peer = await spawnPeer("records-peer.ts", [records.databaseUrl, String(POOL_SIZE)]);
    const base: Record<Way, string> = { gateway: product.baseUrl, gatewayB: GATEWAY_B ? await product.startGateway(GATEWAY_B) : "", direct: records.url, peer: peer.url };

    const scenarios: Scenario[] = [];
    for (const size of SIZES.filter(needed)) {
      const caller = callers.get(size)!;
      const n = size.toLocaleString("en-US");
      if (size <= 10_000) scenarios.push({ key: `filtered-${size}`, label: `filtered, ${n}`, method: "GET", path: FILTERED, caller, ways: WAYS });
      scenarios.push({ key: `default-${size}`, label: `default, ${n}`, method: "GET", path: DEFAULT, caller, ways: WAYS });
    }
    scenarios.push({ key: "create", label: "POST /client", method: "POST", path: "/api/v1/client", caller: writer, ways: WAYS });
    // The same create with twenty custom field values, in a business that defines them (issue 39: >= 0.8x `create`).
    if (wanted("create-cf20")) {
      const caller = await signUp(product.baseUrl, "custom-field-writes", product.internalTokenSecret);
      await defineClientFields(
        product.baseUrl,
        caller,
        CF20_FIELDS.map((f) => f.definition),
      );
      const path = "/api/v1/client";
      scenarios.push({ key: "create-cf20", label: "POST, 20 custom", method: "POST", path, caller, ways: WAYS.filter((w) => w !== "peer"), body: NEW_CLIENT_CF20 });
    }

    // Deep pages of the largest business: the offset page costs more the deeper it is (PostgreSQL
    // reads and discards the rows before it), the cursor page the same at any depth.
    if (deepPage >= 2 && callers.has(deepSize)) {
      const caller = callers.get(deepSize)!;
      const cursorAfter = (page: number) => cursorPathAfter(product.baseUrl, caller, "", page);
      const n = deepPage.toLocaleString("en-US");
      const deep = (key: string, label: string, p: string): Scenario => ({ key, label, method: "GET", path: p, caller, ways: WAYS.filter((w) => w !== "peer"), deep: true });
      scenarios.push(deep("offset-page-1", "offset page 1", `/api/v1/client?perPage=20&include=-contacts&page=1`));
      scenarios.push(deep(`offset-page-${deepPage}`, `offset page ${n}`, `/api/v1/client?perPage=20&include=-contacts&page=${deepPage}`));
      scenarios.push(deep("cursor-page-2", "cursor page 2", await cursorAfter(1)));
      scenarios.push(deep(`cursor-page-${deepPage}`, `cursor page ${n}`, await cursorAfter(deepPage - 1)));
    }

    const hop = scenarios.find((s) => s.key === hopKey && wanted("hop"));
    // Custom fields (extensions E4) in a business of the largest size of its own defining twenty-one fields,
    // whose clients hold their last name as custom field `code` and their isActive as ACTIVE_FIELD too:
    // the same filter and the same sort on the built-in fields and on those.
    if (cfWanted) {
      const t0 = Date.now();
      const caller = await seedCustomFieldBusiness(db, product.baseUrl, product.internalTokenSecret, "custom-fields", deepSize);
      // The same at 1,000 clients, for issue 39's size goal: the same list must cost nearly the same per page.
      const small = deepSize > CF_SMALL_SIZE ? await seedCustomFieldBusiness(db, product.baseUrl, product.internalTokenSecret, "custom-fields-small", CF_SMALL_SIZE) : undefined;
      const sizes = [deepSize, ...(small ? [CF_SMALL_SIZE] : [])].map((size) => size.toLocaleString("en-US")).join(" and ");
      console.log(`seeded ${sizes} clients with ${CF20_FIELDS.length + 1} custom fields in ${Date.now() - t0} ms`);
      const name = encodeURIComponent(seededLastName(Math.floor(deepSize / 2)));
      const cf = (key: string, label: string, path: string, owner = caller): Scenario => ({
        key,
        label,
        method: "GET",
        path,
        caller: owner,
        ways: WAYS.filter((w) => w !== "peer"),
        custom: true,
      });
      const list = (query: string) => `/api/v1/client?${query}&perPage=20&include=-contacts`;
      scenarios.push(cf("cf-builtin-eq", "eq lastName", list(`where=lastName:${name}`)));
      scenarios.push(cf("cf-custom-eq", "eq customFields", list(`where=customFields.code:${name}`)));
      scenarios.push(cf("cf-builtin-sort", "sort lastName", list("orderBy=lastName:asc")));
      scenarios.push(cf("cf-custom-sort", "sort customFields", list("orderBy=customFields.code:asc")));
      // A selective range: the last names after it are ~0.08% of the business (79 of 100,000).
      const after = encodeURIComponent("Wilson-99");
      scenarios.push(cf("cf-builtin-range", "range lastName", list(`where=lastName:gt:${after}`)));
      scenarios.push(cf("cf-custom-range", "range customFields", list(`where=customFields.code:gt:${after}`)));
      // Filtered and sorted (issue 39): 80% of the business, the first page in order, with its total.
      const customBoth = `where=customFields.${ACTIVE_FIELD.key}:bool(true)&orderBy=customFields.code:asc`;
      scenarios.push(cf("cf-builtin-both", "where+sort built-in", list("where=isActive:bool(true)&orderBy=lastName:asc")));
      scenarios.push(cf("cf-custom-both", "where+sort custom", list(customBoth)));
      if (small) {
        // Issue 39's size goal: that custom list per page at 1,000 clients against the largest size. Offset
        // paging answers the total, which counts every matching record: page 1 (the 100,000 one is
        // cf-custom-both). Cursor paging counts nothing: a page halfway through either business.
        const halfway = (size: number) => Math.floor((size * 0.8) / 20 / 2);
        const n = (size: number) => size.toLocaleString("en-US");
        scenarios.push(cf(`cf-size-offset-${CF_SMALL_SIZE}`, `cf offset, ${n(CF_SMALL_SIZE)}`, list(customBoth), small));
        for (const [size, owner] of [
          [CF_SMALL_SIZE, small],
          [deepSize, caller],
        ] as const) {
          scenarios.push(cf(`cf-size-cursor-${size}`, `cf cursor, ${n(size)}`, await cursorPathAfter(product.baseUrl, owner, customBoth, halfway(size)), owner));
        }
      }
    }

    for (let i = scenarios.length - 1; i >= 0; i--) {
      const s = scenarios[i]!;
      if (!wanted(s.key, s.deep ? "deep" : s.custom ? "cf" : undefined)) scenarios.splice(i, 1);
    }
    if (scenarios.length === 0 && !hop) throw new Error(`BENCH_SCENARIOS=${process.env.BENCH_SCENARIOS} selects nothing`);

    // Same answers before any load: same page, same order, same exact total.
    const customAnswers = new Map<string, string>();
    for (const s of scenarios.filter((x) => x.method === "GET")) {
      const bodies = await Promise.all(
        s.ways.map(async (way) => {
          const res = await fetch(base[way] + s.path, { headers: s.caller.headers[way] });
          if (res.status !== 200) throw new Error(`${way} ${s.path}: ${res.status} ${await res.text()}`);
          const body = (await res.json()) as { data: Array<{ id: string }>; meta: Record<string, unknown> };
          // The peer has no cursors; the rest of meta must agree.
          return JSON.stringify({ ids: body.data.map((r) => r.id), meta: { ...body.meta, nextCursor: undefined } });
        }),
      );
      if (new Set(bodies).size !== 1) throw new Error(`${s.label}: the product and the peer disagree:\n${bodies.join("\n")}`);
      if (s.custom) customAnswers.set(s.key, bodies[0]!);
    }
    // A custom-field row answers exactly what its built-in twin does, or their costs say nothing.
    for (const kind of CF_KINDS) {
      const [builtIn, custom] = [customAnswers.get(`cf-builtin-${kind}`), customAnswers.get(`cf-custom-${kind}`)];
      if (builtIn !== undefined && custom !== undefined && builtIn !== custom) throw new Error(`cf ${kind}: customFields.code and lastName answer differently`);
    }

    const results = new Map<string, LoadResult[]>();
    const record = (key: string, r: LoadResult) => results.set(key, [...(results.get(key) ?? []), r]);
    // CPU per request of each server process, per row and way (ms; medians over rounds).
    const pids = {
      gateway: pidListeningOn(Number(new URL(product.baseUrl).port)),
      records: pidListeningOn(Number(new URL(records.url).port)),
      peer: pidListeningOn(Number(new URL(peer.url).port)),
      webhooks: pidListeningOn(Number(new URL(product.services["webhook-delivery"].url).port)),
      ...(GATEWAY_B ? { gatewayB: pidListeningOn(Number(new URL(base.gatewayB).port)) } : {}),
    } as Record<"gateway" | "gatewayB" | "records" | "peer" | "webhooks", number>;
    type Proc = keyof typeof pids;
    const cpu = new Map<string, number[]>();
    // The outbox relay's publish batches (crm-records' /metrics): one round of relay statements and
    // one Kafka request each, so batches per create says how much of that a create pays for.
    const relayBatches = async () => {
      const text = await (await fetch(`${records.url}/metrics`)).text();
      return Number(/^crm_outbox_publish_batches_total(?:\{[^}]*\})? (\d+)/m.exec(text)?.[1] ?? NaN);
    };
    const batches = new Map<string, number[]>();
    // What else a request costs the machine: webhook-delivery consumes every event a create publishes,
    // PostgreSQL runs every statement, Redis the gateway's auth reads and counts, the load generator
    // its side. Every process of the PostgreSQL and Redis servers counts, so another user of them
    // shows up here; the machine's figure is every process on it.
    const elsewhere = {
      webhooks: () => new Map([[pids.webhooks, cpuMs(pids.webhooks)]]),
      postgres: () => cpuByPid("postgres"),
      redis: () => cpuByPid("redis-server"),
      machine: () => new Map([[0, machineBusyMs()]]),
    };
    type Elsewhere = keyof typeof elsewhere;
    const measured = async (key: string, procs: Proc[], load: () => Promise<LoadResult>, writes = false) => {
      const before = procs.map((p) => cpuMs(pids[p]));
      const batches0 = writes && procs.includes("records") ? await relayBatches() : undefined;
      const others = Object.entries(elsewhere).map(([name, read]) => [name, read()] as const);
      const r = await load();
      const requests = r.rps * DURATION_S;
      for (const [name, then] of others) cpu.set(`${key}/${name}`, [...(cpu.get(`${key}/${name}`) ?? []), spentSince(then, elsewhere[name as Elsewhere]()) / requests]);
      procs.forEach((p, i) => cpu.set(`${key}/${p}`, [...(cpu.get(`${key}/${p}`) ?? []), (cpuMs(pids[p]) - before[i]!) / requests]));
      if (batches0 !== undefined) {
        // Let the relay finish the run's last round before reading.
        await new Promise((resolve) => setTimeout(resolve, 200));
        batches.set(key, [...(batches.get(key) ?? []), ((await relayBatches()) - batches0) / requests]);
      }
      record(key, r);
    };
    const procsOf: Record<Way, Proc[]> = { gateway: ["gateway", "records"], gatewayB: ["gatewayB", "records"], direct: ["records"], peer: ["peer"] };
    const run = (s: Scenario, way: Way, durationS: number, overallRate?: number) =>
      runLoad({
        url: base[way] + s.path,
        method: s.method,
        headers: s.caller.headers[way],
        body: s.method === "POST" ? (s.body ?? NEW_CLIENT) : undefined,
        connections: CONNECTIONS,
        durationS,
        overallRate,
      });

    // What each process spends with no requests at all (timers, the relay's poll, Kafka's heartbeats),
    // so a low-throughput row's CPU per request can be read against it.
    const idleMs = 2000;
    const idle0 = Object.fromEntries(Object.entries(pids).map(([p, pid]) => [p, cpuMs(pid)])) as Record<Proc, number>;
    await new Promise((resolve) => setTimeout(resolve, idleMs));
    const idlePerS = Object.fromEntries(Object.entries(pids).map(([p, pid]) => [p, ((cpuMs(pid) - idle0[p as Proc]) * 1000) / idleMs])) as Record<Proc, number>;

    console.log(`warming up ...`);
    const warmed = new Set<string>();
    for (const s of hop && !scenarios.includes(hop) ? [...scenarios, { ...hop, ways: ["gateway", "direct"] as Way[] }] : scenarios) {
      for (const way of s.ways) {
        const first = !warmed.has(`${way} ${s.method}`);
        warmed.add(`${way} ${s.method}`);
        await run(s, way, first ? WARMUP_S : 1);
      }
    }

    /** Each untimed pre-roll's req/s, to read against the timed run after it. */
    const prerolls = new Map<string, number[]>();
    for (let round = 0; round < ROUNDS; round++) {
      const prerollS = round === 0 ? FIRST_PREROLL_S : PREROLL_S;
      for (const s of scenarios) {
        // Alternate who goes first, so neither side always runs on a warmer (or busier) machine.
        const ways = round % 2 ? [...s.ways].reverse() : s.ways;
        for (const way of ways) {
          if (prerollS > 0) prerolls.set(`${s.key}/${way}`, [...(prerolls.get(`${s.key}/${way}`) ?? []), (await run(s, way, prerollS)).rps]);
          await measured(`${s.key}/${way}`, procsOf[way], () => run(s, way, DURATION_S), s.method === "POST");
        }
      }
      // A write costs crm-records more CPU through the gateway than straight to it at saturation;
      // straight to it at the rate the gateway sustained says whether the gateway or the lower rate
      // (fewer requests per event-loop turn, relay round and socket read) makes the difference.
      const create = scenarios.find((s) => s.key === "create");
      if (create) {
        const rate = Math.max(1, Math.round(median(results.get("create/gateway")!.map((r) => r.rps))));
        const paced = (durationS: number) =>
          runPaced({ url: base.direct + create.path, method: "POST", body: NEW_CLIENT, headers: create.caller.headers.direct, connections: CONNECTIONS, durationS, rate });
        if (prerollS > 0) await paced(prerollS);
        await measured("create-at-gateway-rate/direct", procsOf.direct, () => paced(DURATION_S), true);
      }
      // The hop's saturation rate, when its list is not among the rows measured anyway.
      if (hop && !scenarios.includes(hop)) {
        if (prerollS > 0) await run(hop, "gateway", prerollS);
        await measured(`${hop.key}/gateway`, procsOf.gateway, () => run(hop, "gateway", DURATION_S));
      }
      console.log(`round ${round + 1}/${ROUNDS} done`);
    }

    if (hop) {
      // The hop at a fixed rate: half of what the gateway sustained on the cheapest list (the median of
      // every round, so one slow first round does not set it),
      // evenly paced (autocannon's overallRate sends each second's quota back to back, at saturation).
      const rate = Math.max(1, Math.round(median(results.get(`${hop.key}/gateway`)!.map((r) => r.rps)) / 2));
      console.log(`the hop at ${rate}/s, half the gateway's median saturation rate ...`);
      for (let round = 0; round < ROUNDS; round++) {
        const paced: Way[] = GATEWAY_B ? ["gateway", "gatewayB", "direct"] : ["gateway", "direct"];
        for (const way of round % 2 ? paced.reverse() : paced) {
          const load = (durationS: number) => runPaced({ url: base[way] + hop.path, headers: hop.caller.headers[way], connections: CONNECTIONS, durationS, rate });
          if (PREROLL_S > 0) await load(PREROLL_S);
          record(`half-rate/${way}`, await load(DURATION_S));
        }
      }
    }

    const summary = (key: string): LoadResult | undefined => {
      const runs = results.get(key);
      if (!runs) return undefined;
      return {
        rps: median(runs.map((r) => r.rps)),
        p50: median(runs.map((r) => r.p50)),
        p99: median(runs.map((r) => r.p99)),
        failures: runs.reduce((sum, r) => sum + r.failures, 0),
      };
    };

    console.log("");
    console.log(
      `records benchmark: ${CONNECTIONS} connections, ${ROUNDS} rounds x ${DURATION_S} s per run, medians; ${os.cpus().length} cores, load average ${os.loadavg()[0]!.toFixed(1)}, Node ${process.version}, ${new Date().toISOString()}`,
    );
    console.log(`${"request, clients".padEnd(22)}${"through the gateway".padEnd(34)}${"straight to crm-records".padEnd(34)}${"hand-written peer".padEnd(34)}gw/peer  gw/direct`);
    for (const s of scenarios) {
      const [g, d, p] = (["gateway", "direct", "peer"] as Way[]).map((way) => summary(`${s.key}/${way}`));
      console.log(`${s.label.padEnd(22)}${fmt(g)}${fmt(d)}${fmt(p)}${ratio(g?.rps, p?.rps).padStart(7)}  ${ratio(g?.rps, d?.rps).padStart(9)}`);
    }
    // Each round's req/s, in the order measured: a first round far below the others says the warm-up
    // was too short for that way.
    console.log("\nreq/s per round");
    for (const s of scenarios) {
      const rounds = (way: Way) => (results.get(`${s.key}/${way}`) ?? []).map((r) => r.rps.toFixed(0)).join(" ");
      console.log(`${s.label.padEnd(22)}${s.ways.map((way) => `${way} ${rounds(way)}`).join("; ")}`);
    }
    // Each round's CPU per request through the gateway: a round far above the others says that
    // round measured something besides the warm product.
    console.log("CPU per request through the gateway per round, ms: gateway / crm-records");
    for (const s of scenarios) {
      const gw = cpu.get(`${s.key}/gateway/gateway`) ?? [];
      const rec = cpu.get(`${s.key}/gateway/records`) ?? [];
      console.log(`${s.label.padEnd(22)}${gw.map((ms, i) => `${ms.toFixed(3)} / ${rec[i]!.toFixed(3)}`).join("  ")}`);
    }
    if (prerolls.size > 0) {
      console.log(`the untimed run before each of those (${FIRST_PREROLL_S} s in the first round, ${PREROLL_S} s after)`);
      for (const s of scenarios) {
        const rounds = (way: Way) => (prerolls.get(`${s.key}/${way}`) ?? []).map((rps) => rps.toFixed(0)).join(" ");
        console.log(`${s.label.padEnd(22)}${s.ways.map((way) => `${way} ${rounds(way)}`).join("; ")}`);
      }
    }
    if (GATEWAY_B) {
      console.log(`\nthe second gateway (BENCH_GATEWAY_B=${GATEWAY_B}), same rounds`);
      for (const s of scenarios) {
        const [g, b, d] = (["gateway", "gatewayB", "direct"] as Way[]).map((way) => summary(`${s.key}/${way}`));
        console.log(`${s.label.padEnd(22)}${fmt(b)}gwB/direct ${ratio(b?.rps, d?.rps)}  gwB/gw ${ratio(b?.rps, g?.rps)}`);
      }
    }
    const halfG = summary("half-rate/gateway");
    const halfD = summary("half-rate/direct");
    if (hop && halfG && halfD) console.log(`${`${hop.label} @ ${Math.round(halfG.rps)}/s`.padEnd(22)}${fmt(halfG)}${fmt(halfD)}`);
    const halfB = summary("half-rate/gatewayB");
    if (hop && halfB && halfD)
      console.log(
        `${`  second gateway @ ${Math.round(halfB.rps)}/s`.padEnd(22)}${fmt(halfB)}added p50 ${(halfB.p50 - halfD.p50).toFixed(2)} ms (first: ${halfG ? (halfG.p50 - halfD.p50).toFixed(2) : "-"} ms)`,
      );

    // What each request cost the processes that served it, in ms of CPU (user + system).
    const cpuOf = (key: string, proc: Proc | Elsewhere) => {
      const runs = cpu.get(`${key}/${proc}`);
      return runs ? median(runs).toFixed(3).padStart(8) : "       -";
    };
    console.log(
      `\nCPU per request, ms (from /proc; medians over rounds; idle, ms of CPU per s: gateway ${idlePerS.gateway.toFixed(0)}, crm-records ${idlePerS.records.toFixed(0)}, peer ${idlePerS.peer.toFixed(0)})`,
    );
    console.log(`${"request, clients".padEnd(22)}${"through the gateway: gateway + crm-records".padEnd(46)}${"straight: crm-records".padEnd(24)}peer`);
    for (const s of scenarios) {
      const relay = (way: Way) => {
        const runs = batches.get(`${s.key}/${way}`);
        return runs ? median(runs).toFixed(2) : "-";
      };
      console.log(
        `${s.label.padEnd(22)}${`${cpuOf(`${s.key}/gateway`, "gateway")} + ${cpuOf(`${s.key}/gateway`, "records")}`.padEnd(46)}${cpuOf(`${s.key}/direct`, "records").padEnd(24)}${cpuOf(`${s.key}/peer`, "peer")}${s.method === "POST" ? `   (relay publish batches per create: through the gateway ${relay("gateway")}, straight ${relay("direct")})` : ""}`,
      );
    }
    if (GATEWAY_B) {
      console.log(`the second gateway: gateway B + crm-records (idle, ms of CPU per s: ${idlePerS.gatewayB.toFixed(0)})`);
      const rounds = (key: string) => (cpu.get(key) ?? []).map((ms) => ms.toFixed(3)).join(" ");
      for (const s of scenarios) {
        console.log(
          `${s.label.padEnd(22)}${cpuOf(`${s.key}/gatewayB`, "gatewayB")} + ${cpuOf(`${s.key}/gatewayB`, "records")}   per round, gateway B: ${rounds(`${s.key}/gatewayB/gatewayB`)}; first gateway: ${rounds(`${s.key}/gateway/gateway`)}`,
        );
      }
    }
    console.log("\nCPU per request elsewhere, ms (medians over rounds): webhook-delivery / PostgreSQL (all its processes) / Redis; the machine (every process, all cores)");
    const others = (key: string) => `${cpuOf(key, "webhooks")} /${cpuOf(key, "postgres")} /${cpuOf(key, "redis")}; ${cpuOf(key, "machine")}`;
    console.log(`${"request, clients".padEnd(22)}${"through the gateway".padEnd(40)}${"straight to crm-records".padEnd(40)}peer`);
    for (const s of scenarios) {
      console.log(`${s.label.padEnd(22)}${others(`${s.key}/gateway`).padEnd(40)}${others(`${s.key}/direct`).padEnd(40)}${others(`${s.key}/peer`)}`);
    }
    if (cpu.has("create-at-gateway-rate/direct/records")) {
      console.log(
        `${"POST /client, paced".padEnd(22)}${"".padEnd(46)}${cpuOf("create-at-gateway-rate/direct", "records").padEnd(24)}      (straight to crm-records at the rate the gateway sustained, ${Math.round(summary("create-at-gateway-rate/direct")!.rps)}/s)`,
      );
    }

    const goals: Array<[string, string, boolean | "invalid"]> = [];
    const rps = (key: string) => summary(key)?.rps ?? NaN;
    const listGoal = (key: string, min: number) => {
      if (!results.has(`${key}/gateway`) || !results.has(`${key}/peer`)) return;
      const r = rps(`${key}/gateway`) / rps(`${key}/peer`);
      goals.push([`${key}: gateway / peer >= ${min}`, r.toFixed(2), r >= min]);
    };
    listGoal("filtered-10000", 0.5);
    listGoal("default-10000", 0.5);
    listGoal("filtered-1000", 0.4);
    listGoal("default-1000", 0.4);
    for (const s of scenarios.filter((x) => x.method === "GET" && !x.deep && !x.custom && results.has(`${x.key}/direct`))) {
      const r = rps(`${s.key}/gateway`) / rps(`${s.key}/direct`);
      goals.push([`${s.key}: gateway / direct >= 0.85`, r.toFixed(2), r >= 0.85]);
    }
    if (hop && halfG && halfD) {
      const added = halfG.p50 - halfD.p50;
      // A paced way whose p50 reaches its own p50 at saturation was queueing, not at half of it (the
      // machine slowed during the run), and the difference says nothing about the hop.
      const queueing = halfG.p50 >= (summary(`${hop.key}/gateway`)?.p50 ?? Infinity) || halfD.p50 >= (summary(`${hop.key}/direct`)?.p50 ?? Infinity);
      goals.push([
        `hop at half saturation (${hop.key}): added p50 <= 1 ms`,
        `${added.toFixed(2)} ms${queueing ? " (the paced run was queueing: run it again)" : ""}`,
        queueing ? "invalid" : added <= 1,
      ]);
    }
    if (results.has("default-100000/gateway") && results.has("default-1000/gateway")) {
      const cost = rps("default-1000/gateway") / rps("default-100000/gateway");
      goals.push(["default list cost, 100,000 vs 1,000 clients <= 2", cost.toFixed(2), cost <= 2]);
    }
    for (const kind of CF_KINDS) {
      if (!results.has(`cf-custom-${kind}/gateway`) || !results.has(`cf-builtin-${kind}/gateway`)) continue;
      const cost = rps(`cf-builtin-${kind}/gateway`) / rps(`cf-custom-${kind}/gateway`);
      const direct = rps(`cf-builtin-${kind}/direct`) / rps(`cf-custom-${kind}/direct`);
      goals.push([`custom field ${kind} cost / lastName's <= 2 (E4)`, `${cost.toFixed(2)} (direct ${direct.toFixed(2)})`, cost <= 2]);
    }
    // Issue 39's size goal: the same custom-field list per page at the largest size against 1,000 clients.
    const sizeGoal = (name: string, small: string, large: string, max: number) => {
      if (!results.has(`${small}/gateway`) || !results.has(`${large}/gateway`)) return;
      // No request of the larger one answered within a run: the cost has no figure, only a bound.
      const cost = (way: Way) => {
        const r = rps(`${small}/${way}`) / rps(`${large}/${way}`);
        return { r, figure: Number.isFinite(r) ? r.toFixed(2) : `> ${(rps(`${small}/${way}`) * DURATION_S).toFixed(0)} (none answered in ${DURATION_S} s)` };
      };
      const [gateway, direct] = [cost("gateway"), cost("direct")];
      goals.push([name, `${gateway.figure} (direct ${direct.figure})`, gateway.r <= max]);
    };
    const largest = Math.max(...SIZES).toLocaleString("en-US");
    sizeGoal(`custom list, cursor page, ${largest} vs 1,000 <= 1.1 (39)`, `cf-size-cursor-${CF_SMALL_SIZE}`, `cf-size-cursor-${Math.max(...SIZES)}`, 1.1);
    sizeGoal(`custom list, page 1 + total, ${largest} vs 1,000 <= 2 (39)`, `cf-size-offset-${CF_SMALL_SIZE}`, "cf-custom-both", 2);
    if (results.has("create/gateway")) {
      const w = rps("create/gateway") / rps("create/peer");
      goals.push(["POST /client: gateway / peer >= 0.5", w.toFixed(2), w >= 0.5]);
    }
    if (results.has("create/gateway") && results.has("create-cf20/gateway")) {
      const w = rps("create-cf20/gateway") / rps("create/gateway");
      const direct = rps("create-cf20/direct") / rps("create/direct");
      goals.push(["POST with 20 custom values / without >= 0.8 (issue 39)", `${w.toFixed(2)} (direct ${direct.toFixed(2)})`, w >= 0.8]);
    }
    console.log("\ngoals (issue 9)");
    for (const [name, value, met] of goals) console.log(`  ${met === "invalid" ? "NO FIGURE" : met ? "met   " : "MISSED"}  ${name.padEnd(52)} ${value}`);
    const deepRows = scenarios.filter((x) => x.deep);
    if (deepRows.length === 4) {
      const [offset1, offsetDeep, cursor2, cursorDeep] = deepRows.map((x) => x.key) as [string, string, string, string];
      console.log(
        `\ndeep pages of a ${Math.max(...SIZES).toLocaleString("en-US")}-client business (extensions E2.1): cost of the deep page / the first, through the gateway (straight to crm-records)`,
      );
      const cost = (a: string, b: string, way: Way) => (rps(`${a}/${way}`) / rps(`${b}/${way}`)).toFixed(2);
      console.log(`  offset: ${offsetDeep} vs ${offset1}   ${cost(offset1, offsetDeep, "gateway")} (${cost(offset1, offsetDeep, "direct")})`);
      console.log(`  cursor: ${cursorDeep} vs ${cursor2}   ${cost(cursor2, cursorDeep, "gateway")} (${cost(cursor2, cursorDeep, "direct")})`);
    }
  } finally {
    await peer?.close().catch(() => undefined);
    await db.end().catch(() => undefined);
    await product.stop().catch((err) => console.error(String(err)));
    await infra.stop();
  }
}

runMain(main);
