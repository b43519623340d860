// `pnpm bench:delivery:sql` (issue 15): PostgreSQL's CPU per delivery for each statement of the
// delivery path, run through webhook-delivery's own repository on a fresh database: the create of the
// events' records with their subscriber lookup (10 webhooks; BENCH_EVENTS_PER_STATEMENT events per
// statement, as the consumer handles a fetch's events together), then claims of a business's first
// attempts and the outcomes written in batches. The backend's CPU comes from /proc (one connection, so one backend), a
// figure the machine's load disturbs far less than time; and, as figures the load cannot disturb, the WAL
// each kind wrote (bytes per delivery, from the server's insert position: another database's writes
// at the same moment count too) and how many of Delivery's and Webhook's (health) row updates were
// HOT (in place, no index entry), and how often each prepared statement was planned for its values (custom)
// or ran its generic plan. It prints figures; nothing is asserted.
//
// Settings: DATABASE_URL (an admin connection; default postgres://postgres@127.0.0.1:5432/postgres),
// BENCH_EVENTS=300, BENCH_EVENTS_PER_STATEMENT=1, BENCH_HISTORY=0 (finished deliveries in the table beforehand), BENCH_RECORD_BATCHES=2,10,25 (outcomes per statement), BENCH_CLAIM_BATCH=10,
// BENCH_CLAIM=business|poller (the backlog claimed as its consuming instance does, or as the first-attempt poller does),
// BENCH_PLAN_CACHE_MODE (e.g. force_generic_plan, for the session), BENCH_AUTO_EXPLAIN=1 (every statement's
// plan with ANALYZE, BUFFERS and WAL in the server's log: auto_explain, loaded for the session; timings inflate).
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import path from "node:path";
import { Client } from "pg";
import { applyMigrations } from "../../packages/database/src/migrations";
import { DeliveryRepository } from "../../services/webhook-delivery/src/persistence/delivery.repository";
import { runMain } from "./load";

const ADMIN_URL = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
const EVENTS = Number(process.env.BENCH_EVENTS ?? 300);
const RECORD_BATCHES = (process.env.BENCH_RECORD_BATCHES ?? "2,10,25").split(",").map(Number);
const CLAIM_BATCH = Number(process.env.BENCH_CLAIM_BATCH ?? 10);
/** "business": the consuming instance's claims of its business's backlog (claimDue); "poller": any instance's (claimFirstAttempts). */
const CLAIM = process.env.BENCH_CLAIM ?? "business";
const EVENTS_PER_STATEMENT = Number(process.env.BENCH_EVENTS_PER_STATEMENT ?? 1);
const WEBHOOKS = 10;
const HISTORY = Number(process.env.BENCH_HISTORY ?? 0);
const MIGRATIONS = path.resolve(__dirname, "../../services/webhook-delivery/prisma/migrations");

function backendCpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

async function run(url: string, recordBatch: number): Promise<void> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    const pid = (await client.query<{ pid: number }>("SELECT pg_backend_pid() AS pid")).rows[0]!.pid;
    if (process.env.BENCH_PLAN_CACHE_MODE) await client.query(`SET plan_cache_mode = ${process.env.BENCH_PLAN_CACHE_MODE}`);
    if (process.env.BENCH_AUTO_EXPLAIN) {
      // Every statement's plan with ANALYZE, BUFFERS and WAL, in the server's log (needs a superuser).
      for (const setting of [
        "LOAD 'auto_explain'",
        "SET auto_explain.log_min_duration = 0",
        "SET auto_explain.log_analyze = on",
        "SET auto_explain.log_buffers = on",
        "SET auto_explain.log_wal = on",
        "SET auto_explain.log_nested_statements = on",
      ])
        await client.query(setting);
    }
    const business = `bench-${randomBytes(4).toString("hex")}`;
    const hooks: string[] = [];
    for (let i = 0; i < WEBHOOKS; i++) {
      const { rows } = await client.query<{ id: string }>(
        `INSERT INTO webhooks."Webhook" (id, "businessId", url, events, description, secret, "secretPrefix", "isActive", "createdAt", "updatedAt")
         VALUES (gen_random_uuid(), $1, 'http://127.0.0.1/', '{client.created}', '', 'sealed', 'whsec_', true, now(), now()) RETURNING id::text AS id`,
        [business],
      );
      hooks.push(rows[0]!.id);
    }
    if (HISTORY > 0) {
      // Finished deliveries from before (with their payloads and attempts), so statements meet a table
      // of some size: a plan that scans it shows, as it would in bench:delivery's later rounds.
      await client.query(
        `WITH p AS (
           INSERT INTO webhooks."Payload" (id, "eventId", body, "createdAt")
           SELECT gen_random_uuid(), $1 || '-old-' || n, '{}', now() FROM generate_series(1, ceil($2::int / $3::float)::int) AS n
           RETURNING id, "eventId"
         ), d AS (
           INSERT INTO webhooks."Delivery" (id, "webhookId", "businessId", "eventId", event, "payloadId", status, attempt, "responseStatus", "responseBody", "createdAt", "updatedAt")
           SELECT gen_random_uuid(), h.id, $1, p."eventId", 'client.created', p.id, 'SUCCESS', 1, 200, 'ok', now(), now()
           FROM p, unnest($4::uuid[]) AS h(id)
           RETURNING id
         )
         INSERT INTO webhooks."DeliveryAttempt" ("deliveryId", attempt, manual, succeeded, "responseStatus", "responseBody", "durationMs", "createdAt")
         SELECT id, 1, false, true, 200, 'ok', 1, now() FROM d`,
        [business, HISTORY, WEBHOOKS, hooks],
      );
    }
    const sql = {
      exec: (text: string) => client.query(text),
      query: async <T>(text: string, params?: unknown[], options?: { name?: string }) => ({
        rows: (await client.query(options?.name ? { name: options.name, text, values: params } : { text, values: params })).rows as T[],
      }),
    };
    // The repositories' delivery-path statements go through `sql`; their Prisma client and keyring are not used by these.
    const repository = new DeliveryRepository(undefined as never, sql);
    const walBytes = async () => Number((await client.query<{ b: string }>("SELECT pg_wal_lsn_diff(pg_current_wal_insert_lsn(), '0/0')::text AS b")).rows[0]!.b);
    const updates = async () => {
      // This backend's counts reach the shared statistics when it is next idle.
      await client.query("SELECT pg_stat_force_next_flush()");
      const { rows } = await client.query<{ table: string; upd: string; hot: string }>(
        `SELECT relname AS table, n_tup_upd::text AS upd, n_tup_hot_upd::text AS hot FROM pg_stat_user_tables
         WHERE schemaname = 'webhooks' AND relname IN ('Delivery', 'Webhook')`,
      );
      return new Map(rows.map((r) => [r.table, { upd: Number(r.upd), hot: Number(r.hot) }]));
    };
    const updatesBefore = await updates();
    const cpu = new Map<string, { ms: number; statements: number; wal: number }>();
    const measured = async <T>(kind: string, work: () => Promise<T>): Promise<T> => {
      const walBefore = await walBytes();
      const before = backendCpuMs(pid);
      const result = await work();
      const ms = backendCpuMs(pid) - before;
      const wal = (await walBytes()) - walBefore;
      const entry = cpu.get(kind) ?? { ms: 0, statements: 0, wal: 0 };
      entry.ms += ms;
      entry.wal += wal;
      entry.statements += 1;
      cpu.set(kind, entry);
      return result;
    };
    const payload = JSON.stringify({ event: "client.created", data: { id: "x", firstName: "F", lastName: "Bench", email: "c@example.test" }, businessId: business });
    for (let e = 0; e < EVENTS; e += EVENTS_PER_STATEMENT) {
      const events = Array.from({ length: Math.min(EVENTS_PER_STATEMENT, EVENTS - e) }, (_, i) => ({
        eventId: `${business}-${e + i}`,
        businessId: business,
        event: "client.created",
        payload,
      }));
      const now = new Date();
      // Nothing leased: the claims below take the records, as a backlog's would be.
      await measured("create (subscribers included)", () => repository.createForEvents(events, now, { leaseUntil: new Date(now.getTime() + 60_000), limits: new Map() }));
    }
    const waiting: Awaited<ReturnType<DeliveryRepository["claimDue"]>> = [];
    for (let lease = 1; ; lease++) {
      const now = new Date();
      const claims = await measured("claim", () =>
        CLAIM === "poller"
          ? repository.claimFirstAttempts({ now, leaseUntil: new Date(now.getTime() + 60_000 + lease), limit: CLAIM_BATCH, perBusiness: CLAIM_BATCH, held: new Map() })
          : repository.claimDue({ now, leaseUntil: new Date(now.getTime() + 60_000 + lease), limit: CLAIM_BATCH, firstAttemptsOf: business }),
      );
      waiting.push(...claims);
      while (waiting.length >= recordBatch || (claims.length === 0 && waiting.length > 0)) {
        const batch = waiting.splice(0, recordBatch);
        const at = new Date();
        await measured("outcomes", () =>
          repository.recordAttempts(
            batch.map((claim) => ({
              started: { ...claim, ...claim.read!.send },
              outcome: { responseStatus: 200, responseBody: "ok", durationMs: 1, succeeded: true, status: "SUCCESS" as const, nextRetryAt: null },
              at,
            })),
          ),
        );
      }
      if (claims.length === 0) break;
    }
    const deliveries = EVENTS * WEBHOOKS;
    let total = 0;
    let totalWal = 0;
    const parts = [...cpu].map(([kind, { ms, statements }]) => {
      total += ms;
      return `${kind} ${((1000 * ms) / deliveries).toFixed(0)} (${statements})`;
    });
    const walParts = [...cpu].map(([kind, { wal }]) => {
      totalWal += wal;
      return `${kind} ${(wal / deliveries).toFixed(0)}`;
    });
    const updatesAfter = await updates();
    console.log(`outcomes per statement ${String(recordBatch).padStart(3)}: ${((1000 * total) / deliveries).toFixed(0).padStart(5)} µs per delivery = ${parts.join(", ")}`);
    const hot = (table: string) => {
      const [after, before] = [updatesAfter.get(table)!, updatesBefore.get(table)!];
      return `${table} updates ${after.upd - before.upd}, HOT ${after.hot - before.hot}`;
    };
    console.log(
      `                            WAL ${(totalWal / deliveries).toFixed(0).padStart(5)} bytes per delivery = ${walParts.join(", ")}; ${hot("Delivery")}; ${hot("Webhook")}`,
    );
    // How PostgreSQL planned each prepared statement of this connection: a custom plan is planned again at every execution.
    const { rows: plans } = await client.query<{ name: string; generic: string; custom: string }>(
      "SELECT name, generic_plans::text AS generic, custom_plans::text AS custom FROM pg_prepared_statements WHERE name <> '' ORDER BY name",
    );
    console.log(`                            plans (generic/custom): ${plans.map((p) => `${p.name} ${p.generic}/${p.custom}`).join(", ")}`);
  } finally {
    await client.end();
  }
}

async function main(): Promise<void> {
  const name = `bench_delivery_sql_${randomBytes(4).toString("hex")}`;
  const admin = new Client({ connectionString: ADMIN_URL });
  await admin.connect();
  await admin.query(`CREATE DATABASE "${name}"`);
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  try {
    const setup = new Client({ connectionString: url.toString() });
    await setup.connect();
    await applyMigrations({ exec: (text) => setup.query(text), query: async (text, params) => ({ rows: (await setup.query(text, params)).rows }) }, "webhooks", MIGRATIONS);
    await setup.end();
    console.log(`PostgreSQL CPU per delivery (µs), ${EVENTS} events x ${WEBHOOKS} webhooks, claims of ${CLAIM_BATCH} (${CLAIM}); per kind: µs per delivery (statements)`);
    for (const batch of RECORD_BATCHES) await run(url.toString(), batch);
  } finally {
    await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    await admin.end();
  }
}

runMain(main);
