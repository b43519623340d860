// For tests of one migration on PostgreSQL: a fresh database, the migrations before it applied, then
// the test applies it to the rows it seeded.
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { Client } from "pg";
import { applyMigrations, runsOutsideTransaction, splitStatements } from "@crm/database";
import { createTestDatabase } from "@crm/testing";
import { DeliveryRepository } from "../../src/persistence/delivery.repository";

export const MIGRATIONS_DIR = path.resolve(__dirname, "../../prisma/migrations");

const migrationDirs = readdirSync(MIGRATIONS_DIR, { withFileTypes: true })
  .filter((e) => e.isDirectory())
  .map((e) => e.name)
  .sort();
const sqlOf = (dir: string) => readFileSync(path.join(MIGRATIONS_DIR, dir, "migration.sql"), "utf8");

/** A fresh PostgreSQL database named after `prefix`, one client on it, dropped after `work`. */
export async function withDatabase(prefix: string, work: (client: Client) => Promise<void>): Promise<void> {
  const db = await createTestDatabase(prefix);
  const client = new Client({ connectionString: db.url });
  await client.connect();
  try {
    await work(client);
  } finally {
    await client.end();
    await db.drop();
  }
}

/**
 * Creates schema "webhooks" (the client's search path from then on), applies every migration before
 * the one whose folder ends with `suffix`, and returns that one's SQL, for the test to apply.
 */
export async function migratedUpTo(client: Client, suffix: string): Promise<string> {
  const target = migrationDirs.findIndex((d) => d.endsWith(suffix));
  expect(target).toBeGreaterThan(0);
  await client.query(`CREATE SCHEMA "webhooks"; SET search_path TO "webhooks"`);
  for (const dir of migrationDirs.slice(0, target)) {
    const sql = sqlOf(dir);
    // As the runner does: a no-transaction migration statement by statement.
    if (runsOutsideTransaction(sql)) for (const statement of splitStatements(sql)) await client.query(statement);
    else await client.query(sql);
  }
  return sqlOf(migrationDirs[target]!);
}

/** A minimal active webhook row subscribed to client.created, for tests that seed rows by SQL. */
export async function insertWebhookRow(client: Client, id: string, businessId: string): Promise<void> {
  await client.query(
    `INSERT INTO "webhooks"."Webhook" (id, "businessId", url, events, secret, "secretPrefix", "updatedAt") VALUES ($1, $2, 'https://x.test', '{client.created}', 's', 'p', now())`,
    [id, businessId],
  );
}

/** Every migration applied through `client`, and the repository running its statements on that client. */
export async function migratedRepository(client: Client): Promise<DeliveryRepository> {
  const runner = { exec: (text: string) => client.query(text), query: async (text: string, params?: unknown[]) => ({ rows: (await client.query(text, params)).rows }) };
  await applyMigrations(runner, "webhooks", MIGRATIONS_DIR);
  return new DeliveryRepository(undefined as never, runner);
}
