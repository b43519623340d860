// Autovacuum's job for embedded PGlite, done on PGlite's thread (../workers/pglite.ts).
//
// Why: PGlite runs PostgreSQL in single-user mode, which has no autovacuum launcher. Without it a
// 20,000-row table updated five times kept 99,895 dead tuples, and nothing ever gathered planner
// statistics (docs/performance.md, D30). Every delivery's claim and outcome leaves a dead
// tuple, so a long-running embedded product bloated its tables and indexes without bound.
//
// What: every CHECK_INTERVAL_MS, if the database was used since the last check, read each table's
// counters (pg_stat_all_tables: PGlite keeps them) and run VACUUM and/or ANALYZE on the tables past
// PostgreSQL's own autovacuum thresholds, read from its settings (so `-c autovacuum_*` start
// parameters apply, and `autovacuum=off` turns this off) and from each table's storage parameters
// (`ALTER TABLE ... SET (autovacuum_analyze_scale_factor = ...)`), as autovacuum reads them, so a
// migration that sets them means the same in both modes. When idle, nothing runs.
//
// PGlite has one connection, so while a statement of this runs every other one waits. Each table's
// VACUUM and ANALYZE is a statement of its own, sent only after the previous one ended, so work
// that arrived meanwhile runs in between; PGlite's `exec` waits for an open transaction to end, so
// none runs inside one. Plain VACUUM, never FULL: it rewrites nothing and keeps the table readable.
import type { PGlite } from "@electric-sql/pglite";

/** How often a used database's counters are read. Autovacuum's own default nap is 60 s for a server's
 * every database; the delivery table of a busy embedded product passes its threshold in seconds. */
export const CHECK_INTERVAL_MS = 5_000;

/** PostgreSQL's autovacuum thresholds: a table qualifies past `threshold + scaleFactor x reltuples`. */
export interface Thresholds {
  /** The table's `autovacuum_enabled` storage parameter: false, and autovacuum leaves the table alone. */
  enabled?: boolean;
  vacuum: { threshold: number; scaleFactor: number };
  /** PostgreSQL 13+: inserts alone qualify a table for VACUUM (sets pages all-visible, for index-only scans). */
  insert: { threshold: number; scaleFactor: number };
  analyze: { threshold: number; scaleFactor: number };
}

/** A table's counters, as pg_stat_all_tables and pg_class keep them. */
export interface TableCounters {
  /** Schema-qualified and quoted: usable as is in a statement. */
  table: string;
  /** pg_class.reltuples: -1 until the first VACUUM or ANALYZE. */
  reltuples: number;
  /** pg_class.reloptions: the table's storage parameters, `name=value`; null when none is set. */
  reloptions: string[] | null;
  deadTuples: number;
  insertedSinceVacuum: number;
  modifiedSinceAnalyze: number;
}

export type Command = "VACUUM" | "ANALYZE";

/**
 * The table's own thresholds: PostgreSQL's settings, overridden by the table's autovacuum storage
 * parameters (each one not set falls back to its setting, as autovacuum's `relation_needs_vacanalyze` does).
 */
export function tableThresholds(reloptions: readonly string[] | null, defaults: Thresholds): Thresholds {
  if (!reloptions || reloptions.length === 0) return defaults;
  const options = new Map(reloptions.map((option) => [option.slice(0, option.indexOf("=")), option.slice(option.indexOf("=") + 1)]));
  const limit = (name: string, fallback: { threshold: number; scaleFactor: number }) => ({
    threshold: options.has(`autovacuum_${name}_threshold`) ? Number(options.get(`autovacuum_${name}_threshold`)) : fallback.threshold,
    scaleFactor: options.has(`autovacuum_${name}_scale_factor`) ? Number(options.get(`autovacuum_${name}_scale_factor`)) : fallback.scaleFactor,
  });
  const enabled = options.get("autovacuum_enabled");
  return {
    // PostgreSQL's boolean spellings: false, off, no, 0 and their prefixes (f, of, n).
    enabled: enabled === undefined ? defaults.enabled : !/^(f|fa|fal|fals|false|of|off|n|no|0)$/i.test(enabled),
    vacuum: limit("vacuum", defaults.vacuum),
    insert: limit("vacuum_insert", defaults.insert),
    analyze: limit("analyze", defaults.analyze),
  };
}

/** What PostgreSQL's autovacuum would run on the table: VACUUM, ANALYZE, both, or nothing. */
export function dueCommands(counters: TableCounters, thresholds: Thresholds): Command[] {
  if (thresholds.enabled === false) return [];
  // As autovacuum does: a table never vacuumed nor analyzed counts as empty.
  const tuples = Math.max(counters.reltuples, 0);
  const past = (count: number, limit: { threshold: number; scaleFactor: number }) => count > limit.threshold + limit.scaleFactor * tuples;
  const commands: Command[] = [];
  if (past(counters.deadTuples, thresholds.vacuum) || (thresholds.insert.threshold >= 0 && past(counters.insertedSinceVacuum, thresholds.insert))) {
    commands.push("VACUUM");
  }
  if (past(counters.modifiedSinceAnalyze, thresholds.analyze)) commands.push("ANALYZE");
  return commands;
}

/** One statement a pass ran, and the milliseconds from sending it to its end (work sent before it included). */
export interface Ran {
  table: string;
  command: Command;
  ms: number;
}

type Database = Pick<PGlite, "query" | "exec">;

// Ordinary tables and materialized views, the catalogs' included (ANALYZE rewrites pg_statistic's rows);
// TOAST tables are vacuumed with their table.
const COUNTERS = `SELECT quote_ident(s.schemaname) || '.' || quote_ident(s.relname) AS "table", c.reltuples::float8 AS reltuples, c.reloptions,
    s.n_dead_tup::float8 AS "deadTuples", s.n_ins_since_vacuum::float8 AS "insertedSinceVacuum", s.n_mod_since_analyze::float8 AS "modifiedSinceAnalyze"
  FROM pg_stat_all_tables s JOIN pg_class c ON c.oid = s.relid
  WHERE c.relkind IN ('r', 'm') AND s.schemaname <> 'information_schema' AND s.schemaname NOT LIKE 'pg\\_toast%'
  ORDER BY s.n_dead_tup DESC`;

const FLUSH_COUNTERS = `SELECT pg_stat_force_next_flush()`;

const SETTINGS = `SELECT name, setting FROM pg_settings WHERE name = 'autovacuum' OR name LIKE 'autovacuum\\_%\\_threshold' OR name LIKE 'autovacuum\\_%\\_scale\\_factor'`;

/** PostgreSQL's thresholds from its settings, or undefined when its `autovacuum` setting is off. */
export async function readThresholds(db: Database): Promise<Thresholds | undefined> {
  const { rows } = await db.query<{ name: string; setting: string }>(SETTINGS);
  const settings = new Map(rows.map((row) => [row.name, row.setting]));
  if (settings.get("autovacuum") !== "on") return undefined;
  const limit = (name: string) => {
    const threshold = settings.get(`autovacuum_${name}_threshold`);
    const scaleFactor = settings.get(`autovacuum_${name}_scale_factor`);
    if (threshold === undefined || scaleFactor === undefined) throw new Error(`PostgreSQL has no autovacuum_${name}_* settings`);
    return { threshold: Number(threshold), scaleFactor: Number(scaleFactor) };
  };
  return { vacuum: limit("vacuum"), insert: limit("vacuum_insert"), analyze: limit("analyze") };
}

/** Runs autovacuum's job on one PGlite: started once it is open, stopped before it closes. */
export class Autovacuum {
  private used = false;
  private stopped = false;
  private pass: Promise<unknown> | undefined;
  private readonly timer: NodeJS.Timeout | undefined;

  private constructor(
    private readonly db: Database,
    private readonly thresholds: Thresholds | undefined,
    intervalMs: number,
  ) {
    if (!thresholds) return;
    this.timer = setInterval(() => this.check(), intervalMs);
    // A timer must not keep the thread alive once PGlite is closed.
    this.timer.unref();
  }

  static async start(db: Database, intervalMs = CHECK_INTERVAL_MS): Promise<Autovacuum> {
    return new Autovacuum(db, await readThresholds(db), intervalMs);
  }

  /** The database was used: the next check reads its counters. */
  noteUse(): void {
    this.used = true;
  }

  /** Reads the counters and runs what is due, table by table; resolves with what it ran. */
  async runPass(): Promise<Ran[]> {
    const thresholds = this.thresholds;
    if (!thresholds || this.stopped) return [];
    const ran: Ran[] = [];
    // PostgreSQL publishes a backend's counters at most once a second, after a statement, so the
    // last second's changes would wait for the next statement after it: published now.
    await this.db.query(FLUSH_COUNTERS);
    const { rows } = await this.db.query<TableCounters>(COUNTERS);
    for (const counters of rows) {
      for (const command of dueCommands(counters, tableThresholds(counters.reloptions, thresholds))) {
        if (this.stopped) return ran;
        const started = performance.now();
        await this.db.exec(`${command} ${counters.table}`);
        ran.push({ table: counters.table, command, ms: performance.now() - started });
      }
    }
    return ran;
  }

  /** No pass starts after this; resolves once the statement in progress, if any, has ended. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    await this.pass;
  }

  private check(): void {
    if (!this.used || this.pass || this.stopped) return;
    this.used = false;
    // A failed statement (a table dropped since the counters were read) leaves its table as it was;
    // the next check reads the counters again.
    this.pass = this.runPass()
      .catch(() => undefined)
      .finally(() => {
        this.pass = undefined;
      });
  }
}
