// `pnpm bench:records:cpu` (issue 9): CPU time per list and create call inside crm-records' process,
// which a shared machine disturbs far less than throughput. RecordService.list against the same two
// statements sent with `pg` by hand, on 1,000 clients; RecordService.create (a client: record,
// outbox row, count) against the peer's BEGIN, two INSERTs and COMMIT with `pg`. One call at a time.
// Prints the statements the service sent, then ms of wall and CPU per call. Settings:
// BENCH_CALLS (default 500), BENCH_CASES (names to run, comma-separated prefixes: `default`, `isActive`, `create`).
import os from "node:os";
import pg from "pg";
import { openDatabase } from "../../packages/database/src";
import { createTestDatabase, startInfra, testInfra } from "@crm/testing";
import { entityDefinitions } from "../../services/crm-records/src/entities";
import { createPrismaClient } from "../../services/crm-records/src/persistence/prisma";
import { RecordService } from "../../services/crm-records/src/application/record.service";
import { MIGRATIONS_DIR } from "../../services/crm-records/src/start";
import { uuidv7 } from "@crm/contracts";
import { seedClients } from "./records-seed";
import { runMain } from "./load";

const CALLS = Number(process.env.BENCH_CALLS ?? 500);
const BUSINESS = "0193a1b2-0000-7000-8000-00000000000a";
const COLUMNS = `id, "businessId", "firstName", "lastName", email, phone, "companyName", notes, "isActive", "createdAt", "updatedAt"`;

const CASES = [
  {
    name: "default order",
    query: { perPage: "20", include: "-contacts" },
    page: `SELECT ${COLUMNS} FROM records."Client" WHERE "businessId" = $1 ORDER BY "createdAt" DESC, id DESC LIMIT 20 OFFSET 0`,
    count: `SELECT COALESCE(SUM("count"), 0) AS total FROM records."RecordCount" WHERE "businessId" = $1 AND entity = 'client'`,
  },
  {
    name: "isActive + lastName",
    query: { where: "isActive:bool(true)", orderBy: "lastName:asc", perPage: "20", include: "-contacts" },
    page: `SELECT ${COLUMNS} FROM records."Client" WHERE "businessId" = $1 AND "isActive" = true ORDER BY "lastName" ASC, id ASC LIMIT 20 OFFSET 0`,
    count: `SELECT count(*)::int AS total FROM records."Client" WHERE "businessId" = $1 AND "isActive" = true`,
  },
];

const SELECTED = process.env.BENCH_CASES?.split(",").map((c) => c.trim());
const wanted = (name: string) => !SELECTED || SELECTED.some((c) => name.startsWith(c));

const NEW_CLIENT = { firstName: "Grace", lastName: "Hopper", email: "grace@example.test", companyName: "Navy" };

async function perCall(work: () => Promise<unknown>): Promise<string> {
  for (let i = 0; i < Math.min(200, CALLS); i++) await work();
  const started = performance.now();
  const cpu = process.cpuUsage();
  for (let i = 0; i < CALLS; i++) await work();
  const used = process.cpuUsage(cpu);
  return `wall ${((performance.now() - started) / CALLS).toFixed(2)} ms, cpu ${((used.user + used.system) / 1000 / CALLS).toFixed(2)} ms`;
}

async function main(): Promise<void> {
  const infra = await startInfra(() => undefined);
  Object.assign(testInfra, { databaseUrl: infra.databaseUrl });
  const database = await createTestDatabase("bench_records_cpu");
  const sent: string[] = [];
  const query = pg.Client.prototype.query as (...args: unknown[]) => unknown;
  (pg.Client.prototype as unknown as { query: (...args: unknown[]) => unknown }).query = function (this: pg.Client, ...args: unknown[]) {
    const q = args[0] as string | { text?: string };
    sent.push((typeof q === "string" ? q : (q?.text ?? "")).replace(/\s+/g, " ").trim());
    return query.apply(this, args);
  };
  try {
    const db = await openDatabase({ url: database.url, dataDir: os.tmpdir(), schema: "records", migrationsDir: MIGRATIONS_DIR, migrate: true });
    const prisma = createPrismaClient(db.adapter);
    const service = new RecordService({ prisma, definitions: entityDefinitions, parallelQueries: true, cursorSecret: "bench-cursor-secret", sql: db.sql });
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    const pool = new pg.Pool({ connectionString: database.url, max: 10 });
    await seedClients(client, BUSINESS, 1000);
    await client.query("ANALYZE");
    for (const c of CASES.filter((x) => wanted(x.name))) {
      sent.length = 0;
      await service.list(entityDefinitions.client, BUSINESS, c.query);
      console.log(`\n${c.name}: the service sent\n  ${sent.map((s) => s.slice(0, 160)).join("\n  ")}`);
      console.log(`  RecordService.list           ${await perCall(() => service.list(entityDefinitions.client, BUSINESS, c.query))}`);
      console.log(`  same statements with pg       ${await perCall(() => Promise.all([pool.query(c.page, [BUSINESS]), pool.query(c.count, [BUSINESS])]))}`);
    }
    if (wanted("create")) {
      await client.query(`CREATE TABLE IF NOT EXISTS bench_client (LIKE records."Client" INCLUDING DEFAULTS)`);
      await client.query(`CREATE TABLE IF NOT EXISTS bench_outbox (id uuid PRIMARY KEY, topic text NOT NULL, key text NOT NULL, payload jsonb NOT NULL)`);
      const create = () => service.create(entityDefinitions.client, BUSINESS, { ...NEW_CLIENT });
      sent.length = 0;
      await create();
      console.log(`\ncreate: the service sent\n  ${sent.map((s) => s.slice(0, 160)).join("\n  ")}`);
      console.log(`  RecordService.create         ${await perCall(create)}`);
      // The peer's create (bench/src/records-peer.ts): two INSERTs in one transaction.
      const peerCreate = async () => {
        const db = await pool.connect();
        try {
          await db.query("BEGIN");
          const id = uuidv7();
          const inserted = await db.query(`INSERT INTO bench_client (${COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, now(), now()) RETURNING ${COLUMNS}`, [
            id,
            BUSINESS,
            NEW_CLIENT.firstName,
            NEW_CLIENT.lastName,
            NEW_CLIENT.email,
            null,
            NEW_CLIENT.companyName,
            null,
            true,
          ]);
          const event = { id: uuidv7(), type: "client.created", businessId: BUSINESS, occurredAt: new Date().toISOString(), version: 1, data: inserted.rows[0] };
          await db.query(`INSERT INTO bench_outbox (id, topic, key, payload) VALUES ($1, 'crm.records.v1', $2, $3)`, [event.id, BUSINESS, JSON.stringify(event)]);
          await db.query("COMMIT");
          return JSON.stringify({ success: true, data: inserted.rows[0] });
        } finally {
          db.release();
        }
      };
      console.log(`  the peer's transaction (pg)   ${await perCall(peerCreate)}`);
    }
    await pool.end();
    await client.end();
    await prisma.$disconnect();
    await db.close();
  } finally {
    await database.drop();
    await infra.stop();
  }
}

runMain(main);
