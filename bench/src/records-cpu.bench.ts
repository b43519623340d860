// `pnpm bench:records:cpu` (issue 9): CPU time per list call inside crm-records' process, which a
// shared machine disturbs far less than throughput. RecordService.list (Prisma, the product's code)
// against the same two statements sent with `pg` by hand, one call at a time, on 1,000 clients.
// Prints the statements the service sent, then ms of wall and CPU per call. Setting:
// BENCH_CALLS (default 500).
import os from "node:os";
import pg from "pg";
import { openDatabase } from "../../packages/database/src";
import { createTestDatabase, startInfra, testInfra } from "@crm/testing";
import { entityDefinitions } from "../../services/crm-records/src/entities";
import { createPrismaClient } from "../../services/crm-records/src/persistence/prisma";
import { RecordService } from "../../services/crm-records/src/application/record.service";
import { MIGRATIONS_DIR } from "../../services/crm-records/src/start";
import { seedClients } from "./records-seed";

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
    for (const c of CASES) {
      sent.length = 0;
      await service.list(entityDefinitions.client, BUSINESS, c.query);
      console.log(`\n${c.name}: the service sent\n  ${sent.map((s) => s.slice(0, 160)).join("\n  ")}`);
      console.log(`  RecordService.list           ${await perCall(() => service.list(entityDefinitions.client, BUSINESS, c.query))}`);
      console.log(`  same statements with pg       ${await perCall(() => Promise.all([pool.query(c.page, [BUSINESS]), pool.query(c.count, [BUSINESS])]))}`);
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

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
