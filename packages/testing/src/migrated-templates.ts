// A service schema migrated once per jest run, and copied for each test file that opens it, instead of
// every file creating and migrating a fresh database (3-5 s each, in both modes). A copy is a
// PostgreSQL template database (`CREATE DATABASE x TEMPLATE t`) or a closed PGlite data directory.
//
// A template is keyed by a hash of its schema name and its migrations folder's files, so a changed
// migration gets a new template rather than a stale one. Templates live for one run: global setup
// names the run's fixtures directory (TEST_FIXTURES_DIR) and global teardown removes them. Without
// that directory (outside jest's global setup) every database migrates from scratch, as before.
// The first worker that needs a template builds it under a file lock; the others wait for it.
// The run's directory and the templates' removal: ./fixtures-run.ts.
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { Client } from "pg";
import { openDatabase } from "@crm/database";
import { testInfra, waitForDisconnects } from "./databases";
import { fixturesDir, runId, TEMPLATE_PREFIX } from "./fixtures-run";

/** A service's schema and the migrations that build it. */
export interface SchemaSource {
  schema: string;
  migrationsDir: string;
}

/** sha256 of the schema name and every file under the migrations folder (relative path and bytes). */
export function migrationsHash(source: SchemaSource): string {
  const hash = createHash("sha256").update(`${source.schema}\0`);
  const walk = (dir: string, relative: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const rel = path.join(relative, entry.name);
      if (entry.isDirectory()) walk(path.join(dir, entry.name), rel);
      else
        hash
          .update(`${rel}\0`)
          .update(readFileSync(path.join(dir, entry.name)))
          .update("\0");
    }
  };
  walk(source.migrationsDir, "");
  return hash.digest("hex").slice(0, 16);
}

/** Runs `work` holding the lock file `lockPath`; a lock whose holder process is gone is taken over. */
async function withFileLock<T>(lockPath: string, work: () => Promise<T>): Promise<T> {
  for (;;) {
    try {
      writeFileSync(lockPath, String(process.pid), { flag: "wx" });
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
      if (holderGone(lockPath)) rmSync(lockPath, { force: true });
      else await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
  try {
    return await work();
  } finally {
    rmSync(lockPath, { force: true });
  }
}

function holderGone(lockPath: string): boolean {
  let pid: number;
  try {
    pid = Number(readFileSync(lockPath, "utf8"));
  } catch {
    return false;
  }
  // An empty file: its holder is between creating and writing it.
  if (!pid) return false;
  try {
    process.kill(pid, 0);
    return false;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "ESRCH";
  }
}

/**
 * The name of a PostgreSQL database holding `source` fully migrated, to copy with
 * `CREATE DATABASE ... TEMPLATE`; undefined outside a jest run. Nobody can connect to it (a template
 * must have no connections while it is copied).
 */
export async function postgresTemplate(source: SchemaSource): Promise<string | undefined> {
  const dir = fixturesDir();
  const admin = testInfra.databaseUrl;
  if (!dir || !admin) return undefined;
  const name = `${TEMPLATE_PREFIX}_${runId(dir)}_${migrationsHash(source)}`;
  if (await isSealed(admin, name)) return name;
  await withFileLock(path.join(dir, `${name}.lock`), async () => {
    if (await isSealed(admin, name)) return;
    await adminQuery(admin, `DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    await adminQuery(admin, `CREATE DATABASE "${name}"`);
    try {
      const url = new URL(admin);
      url.pathname = `/${name}`;
      const database = await openDatabase({ url: url.toString(), dataDir: dir, ...source, migrate: true, poolSize: 1 });
      await database.close();
      await waitForDisconnects(url.toString());
      await adminQuery(admin, `ALTER DATABASE "${name}" WITH ALLOW_CONNECTIONS false`);
      await adminQuery(admin, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '${name}'`);
    } catch (err) {
      await adminQuery(admin, `DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      throw err;
    }
  });
  return name;
}

/** Built to the end: a template accepts no connections once its migrations are in. */
async function isSealed(admin: string, name: string): Promise<boolean> {
  const rows = await adminQuery<{ datallowconn: boolean }>(admin, "SELECT datallowconn FROM pg_database WHERE datname = $1", [name]);
  return rows[0]?.datallowconn === false;
}

async function adminQuery<T>(admin: string, text: string, params: unknown[] = []): Promise<T[]> {
  const client = new Client({ connectionString: admin });
  await client.connect();
  try {
    return (await client.query(text, params)).rows as T[];
  } finally {
    await client.end();
  }
}

/**
 * A closed PGlite data directory holding `source` fully migrated, to copy as a data directory's
 * `pglite` folder; undefined outside a jest run.
 */
export async function pgliteTemplate(source: SchemaSource): Promise<string | undefined> {
  const dir = fixturesDir();
  if (!dir) return undefined;
  const target = path.join(dir, `pglite-${migrationsHash(source)}`);
  if (existsSync(target)) return target;
  await withFileLock(`${target}.lock`, async () => {
    if (existsSync(target)) return;
    const building = `${target}.building`;
    rmSync(building, { recursive: true, force: true });
    const database = await openDatabase({ dataDir: building, ...source });
    await database.close();
    renameSync(path.join(building, "pglite"), target);
    rmSync(building, { recursive: true, force: true });
  });
  return target;
}
