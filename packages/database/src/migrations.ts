// Prisma-compatible migration runner: applies prisma/migrations/*/migration.sql in name order and
// records each in "<schema>"._prisma_migrations with Prisma's own columns (checksum = sha256 of the
// file), so `prisma migrate status/deploy` with `?schema=<schema>` agree with it. One runner for
// PostgreSQL and PGlite; an advisory lock keeps concurrent starters from applying a migration twice.
// A migration runs in one transaction, unless its first line is NO_TRANSACTION (below).
import { createHash, randomUUID } from "node:crypto";
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";

export interface SqlRunner {
  /** Runs a multi-statement script. */
  exec(sql: string): Promise<unknown>;
  /**
   * `options.name`: the statement is prepared once per connection under this name and later only
   * bound and executed (PostgreSQL then skips parsing and, after a few runs, planning). Only for a
   * text that never changes for that name, and for a bounded set of names (pg keeps each one for the
   * connection's life). Embedded PGlite prepares every text it sees already (prepared-pglite.ts).
   */
  query<T>(sql: string, params?: unknown[], options?: { name?: string }): Promise<{ rows: T[] }>;
}

interface AppliedRow {
  migration_name: string;
  checksum: string;
  finished_at: unknown;
}

/**
 * First line of a migration that cannot run in a transaction (`CREATE INDEX CONCURRENTLY`, `DROP INDEX
 * CONCURRENTLY`): its statements run one by one, each committed on its own. If one fails, the migration
 * stays recorded as failed (as a transactional one does) with the statements before it applied, so
 * such a migration is written to be re-run (`IF NOT EXISTS`) and holds one concurrent index change.
 * `SET lock_timeout` in it lasts for the session, so the runner resets it afterwards.
 */
export const NO_TRANSACTION = "--! no-transaction";

export function runsOutsideTransaction(sql: string): boolean {
  return sql.split("\n", 1)[0]!.trim() === NO_TRANSACTION;
}

/**
 * The statements of a script, split at the semicolons outside quotes ('...', "...", $tag$...$tag$) and
 * comments (-- and /* *\/); comments stay with the statement that follows them, empty ones go.
 */
export function splitStatements(sql: string): string[] {
  const statements: string[] = [];
  let start = 0;
  let i = 0;
  const endOf = (close: string, from: number) => {
    const at = sql.indexOf(close, from);
    return at < 0 ? sql.length : at + close.length;
  };
  while (i < sql.length) {
    const c = sql[i]!;
    if (c === "-" && sql[i + 1] === "-") i = endOf("\n", i);
    else if (c === "/" && sql[i + 1] === "*") i = endOf("*/", i + 2);
    else if (c === "'" || c === '"') i = endOf(c, i + 1);
    else if (c === "$" && /^\$[A-Za-z_]*\$/.test(sql.slice(i))) {
      const tag = /^\$[A-Za-z_]*\$/.exec(sql.slice(i))![0];
      i = endOf(tag, i + tag.length);
    } else if (c === ";") {
      statements.push(sql.slice(start, i + 1));
      i += 1;
      start = i;
    } else i += 1;
  }
  statements.push(sql.slice(start));
  return statements.filter((s) => s.replace(/--[^\n]*|\/\*[\s\S]*?\*\/|;/g, "").trim() !== "");
}

function lockKey(schema: string): number {
  return createHash("sha256").update(`migrations:${schema}`).digest().readInt32BE(0);
}

/** How often a starter waiting for another's migrations asks for the lock again. */
const LOCK_POLL_MS = 50;

/**
 * The migrations lock, asked for again until free rather than waited for in pg_advisory_lock: a waiting
 * call is a transaction left open, and a CREATE INDEX CONCURRENTLY in the holder's migration waits for
 * every open transaction to end, so two instances starting together deadlocked.
 */
async function lockMigrations(db: SqlRunner, key: number): Promise<void> {
  while (!(await db.query<{ locked: boolean }>("SELECT pg_try_advisory_lock($1) AS locked", [key])).rows[0]?.locked) {
    await new Promise((resolve) => setTimeout(resolve, LOCK_POLL_MS));
  }
}

export async function applyMigrations(db: SqlRunner, schema: string, dir: string): Promise<string[]> {
  const table = `"${schema}"."_prisma_migrations"`;
  await lockMigrations(db, lockKey(schema));
  try {
    await db.exec(`CREATE SCHEMA IF NOT EXISTS "${schema}";
      CREATE TABLE IF NOT EXISTS ${table} (
        "id" VARCHAR(36) PRIMARY KEY NOT NULL, "checksum" VARCHAR(64) NOT NULL, "finished_at" TIMESTAMPTZ,
        "migration_name" VARCHAR(255) NOT NULL, "logs" TEXT, "rolled_back_at" TIMESTAMPTZ,
        "started_at" TIMESTAMPTZ NOT NULL DEFAULT now(), "applied_steps_count" INTEGER NOT NULL DEFAULT 0)`);
    const done = await db.query<AppliedRow>(`SELECT migration_name, checksum, finished_at FROM ${table} WHERE rolled_back_at IS NULL`);
    const applied = new Map(done.rows.map((r) => [r.migration_name, r]));
    const names = (await readdir(dir, { withFileTypes: true }))
      .filter((e) => e.isDirectory())
      .map((e) => e.name)
      .sort();
    const ran: string[] = [];
    for (const name of names) {
      const sql = await readFile(path.join(dir, name, "migration.sql"), "utf8");
      const checksum = createHash("sha256").update(sql).digest("hex");
      const previous = applied.get(name);
      if (previous) {
        if (!previous.finished_at) throw new Error(`migration ${schema}/${name} previously failed; resolve it first`);
        if (previous.checksum !== checksum) throw new Error(`migration ${schema}/${name} was modified after it was applied`);
        continue;
      }
      const id = randomUUID();
      await db.query(`INSERT INTO ${table} (id, checksum, migration_name, started_at) VALUES ($1, $2, $3, now())`, [id, checksum, name]);
      if (runsOutsideTransaction(sql)) {
        try {
          for (const statement of splitStatements(sql)) await db.exec(statement);
        } finally {
          await db.exec("RESET lock_timeout; RESET statement_timeout");
        }
      } else await db.exec(`BEGIN;\n${sql}\nCOMMIT;`);
      await db.query(`UPDATE ${table} SET finished_at = now(), applied_steps_count = 1 WHERE id = $1`, [id]);
      ran.push(name);
    }
    return ran;
  } finally {
    await db.query("SELECT pg_advisory_unlock($1)", [lockKey(schema)]);
  }
}
