// One way to open a service's database, embedded or real, behind the same Prisma driver-adapter
// interface. Embedded mode shares one PGlite instance per data directory across every service in
// the process (each service owns its own PostgreSQL schema), because one PGlite costs ~200 MB
// (settings and first-start template: ./pglite.ts). It runs on a thread of its own
// (./pglite-thread/client.ts), so the database's work does not take the services' thread.
import type { PGlite } from "@electric-sql/pglite";
import { PrismaPg } from "@prisma/adapter-pg";
import { PrismaPGlite } from "pglite-prisma-adapter";
import path from "node:path";
import type { Pool } from "pg";
import { FaultTolerantPool } from "./fault-tolerant-pool";
import { applyMigrations, type SqlRunner } from "./migrations";
import { type EmbeddedPglite, PgliteThread } from "./pglite-thread/client";

export type DriverAdapter = PrismaPg | PrismaPGlite;

export interface DatabaseOptions {
  /** PostgreSQL connection string; absent means embedded PGlite under dataDir. */
  url?: string;
  dataDir: string;
  /** The PostgreSQL schema this service owns. */
  schema: string;
  /** The service's prisma/migrations folder. */
  migrationsDir: string;
  /** Apply pending migrations while opening (always true in embedded mode). */
  migrate?: boolean;
  poolSize?: number;
}

export interface Database {
  readonly kind: "postgres" | "pglite";
  readonly adapter: DriverAdapter;
  /** Raw SQL access for readiness checks and the migration runner. */
  readonly sql: SqlRunner;
  ping(): Promise<void>;
  close(): Promise<void>;
}

interface SharedPglite {
  instance: Promise<EmbeddedPglite>;
  users: number;
}
const embedded = new Map<string, SharedPglite>();

function acquirePglite(dataDir: string): Promise<EmbeddedPglite> {
  const dir = path.resolve(dataDir, "pglite");
  let shared = embedded.get(dir);
  if (!shared) {
    shared = { instance: PgliteThread.open(dir), users: 0 };
    embedded.set(dir, shared);
  }
  shared.users += 1;
  return shared.instance;
}

async function releasePglite(dataDir: string): Promise<void> {
  const dir = path.resolve(dataDir, "pglite");
  const shared = embedded.get(dir);
  if (!shared) return;
  shared.users -= 1;
  if (shared.users > 0) return;
  embedded.delete(dir);
  await (await shared.instance).close();
}

export async function openDatabase(options: DatabaseOptions): Promise<Database> {
  if (options.url) return openPostgres(options, options.url);
  const pglite = await acquirePglite(options.dataDir);
  const sql: SqlRunner = {
    exec: (text) => pglite.exec(text),
    query: async <T>(text: string, params?: unknown[]) => ({ rows: (await pglite.query<T>(text, params)).rows }),
  };
  try {
    await applyMigrations(sql, options.schema, options.migrationsDir);
  } catch (err) {
    await releasePglite(options.dataDir);
    throw err;
  }
  return {
    kind: "pglite",
    // The adapter calls only query, exec and transaction (and their transaction's query and rollback).
    adapter: new PrismaPGlite(pglite as PGlite),
    sql,
    ping: async () => {
      await pglite.query("SELECT 1");
    },
    close: () => releasePglite(options.dataDir),
  };
}

async function openPostgres(options: DatabaseOptions, url: string): Promise<Database> {
  // Reads retried once on a fresh connection, connection faults 503000 (./fault-tolerant-pool.ts).
  const pool = new FaultTolerantPool({ connectionString: url, max: options.poolSize ?? 10 });
  // An idle client whose connection dies (server restart, database dropped) emits "error" on the
  // pool; without a listener that would crash the process. The next query reconnects or fails loudly.
  pool.on("error", () => undefined);
  const sql: SqlRunner = {
    exec: (text) => pool.query(text),
    query: async <T>(text: string, params?: unknown[], options?: { name?: string }) => ({
      rows: (await (options?.name ? pool.query({ name: options.name, text, values: params }) : pool.query(text, params))).rows as T[],
    }),
  };
  try {
    if (options.migrate) await withOneClient(pool, (client) => applyMigrations(client, options.schema, options.migrationsDir));
    await pool.query("SELECT 1");
  } catch (err) {
    await pool.end();
    throw err;
  }
  return {
    kind: "postgres",
    adapter: new PrismaPg(pool),
    sql,
    ping: async () => {
      await pool.query("SELECT 1");
    },
    close: () => pool.end(),
  };
}

/** Advisory locks are per connection, so the migration runner needs one client for its whole run. */
async function withOneClient<T>(pool: Pool, work: (db: SqlRunner) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    return await work({
      exec: (text) => client.query(text),
      query: async <R>(text: string, params?: unknown[]) => ({ rows: (await client.query(text, params)).rows as R[] }),
    });
  } finally {
    client.release();
  }
}

export { applyMigrations };
