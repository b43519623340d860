// One jest run's fixtures directory (TEST_FIXTURES_DIR): global setup makes it, the workers keep the
// run's migrated templates in it and name its PostgreSQL template databases after it
// (./migrated-templates.ts), and global teardown removes both. Kept apart from the template builder
// so global setup and teardown load only pg.
import { randomBytes } from "node:crypto";
import { mkdirSync, rmSync } from "node:fs";
import path from "node:path";
import { Client } from "pg";

/** The environment variable that names the run's fixtures directory. */
export const FIXTURES_DIR_VARIABLE = "TEST_FIXTURES_DIR";

/** How every template database's name starts (then the run's id and the schema's hash). */
export const TEMPLATE_PREFIX = "crm_tmpl";

/** A new fixtures directory for one jest run, under `parent`. */
export function createFixturesDir(parent: string): string {
  const dir = path.join(parent, `crm-fixtures-${randomBytes(4).toString("hex")}`);
  mkdirSync(dir, { recursive: true });
  return dir;
}

/** The run's fixtures directory; undefined outside a jest run's global setup. */
export function fixturesDir(): string | undefined {
  return process.env[FIXTURES_DIR_VARIABLE] || undefined;
}

/** The run's part of a template database's name: the fixtures directory's random suffix. */
export function runId(dir: string): string {
  return path.basename(dir).replace(/^crm-fixtures-/, "");
}

/** Global teardown: drops the run's template databases and removes its fixtures directory. */
export async function removeFixtures(): Promise<void> {
  const dir = fixturesDir();
  if (!dir) return;
  // Read here, not through testInfra: that module may have been loaded before global setup set it.
  const admin = process.env.TEST_DATABASE_URL;
  if (admin) {
    const client = new Client({ connectionString: admin });
    await client.connect();
    try {
      const { rows } = await client.query<{ datname: string }>("SELECT datname FROM pg_database WHERE datname LIKE $1", [`${TEMPLATE_PREFIX}\\_${runId(dir)}\\_%`]);
      for (const { datname } of rows) await client.query(`DROP DATABASE IF EXISTS "${datname}" WITH (FORCE)`);
    } finally {
      await client.end();
    }
  }
  rmSync(dir, { recursive: true, force: true });
}
