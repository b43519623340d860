// `pnpm lint:migrations` (scripts/lint-migrations.mjs, part of `pnpm test`): squawk finds a migration
// that would block writes, passes one written to run beside live traffic, and .squawk.toml excludes
// nothing without a reason (issue 38 item 3).
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";

const ROOT = path.resolve(__dirname, "..");
const SCRIPT = path.join(ROOT, "scripts/lint-migrations.mjs");

function lint(migrations: Record<string, string>): { status: number | null; output: string } {
  const dir = mkdtempSync(path.join(os.tmpdir(), "crm-lint-"));
  try {
    for (const [name, sql] of Object.entries(migrations)) {
      mkdirSync(path.join(dir, "svc/prisma/migrations", name), { recursive: true });
      writeFileSync(path.join(dir, "svc/prisma/migrations", name, "migration.sql"), sql);
    }
    const res = spawnSync(process.execPath, [SCRIPT, dir], { cwd: ROOT, encoding: "utf8" });
    return { status: res.status, output: res.stdout + res.stderr };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const INIT = `CREATE TABLE "s"."T" (id int PRIMARY KEY, name text);\n`;

describe("migration lint", () => {
  it("fails a migration that builds an index without CONCURRENTLY, and one without lock_timeout", () => {
    const res = lint({
      "1_init": INIT,
      "2_blocking_index": `SET LOCAL lock_timeout = '5s';\nCREATE INDEX "T_name_idx" ON "s"."T" ("name");\n`,
      "3_no_lock_timeout": `ALTER TABLE "s"."T" ADD COLUMN "x" text;\n`,
    });
    expect(res.status).toBe(1);
    expect(res.output).toMatch(/2_blocking_index\/migration\.sql.*require-concurrent-index-creation/);
    expect(res.output).toMatch(/3_no_lock_timeout\/migration\.sql.*require-lock-timeout/);
  });

  it("passes the same changes written not to block: a concurrent index outside a transaction, lock_timeout set", () => {
    const res = lint({
      // The first migration creates empty tables: it is not linted.
      "1_init": `CREATE TABLE "s"."T" (id int PRIMARY KEY); CREATE INDEX "T_id_idx" ON "s"."T" (id);\n`,
      "2_name": `SET LOCAL lock_timeout = '5s';\nALTER TABLE "s"."T" ADD COLUMN "name" text;\n`,
      "3_name_index": `--! no-transaction\nSET lock_timeout = '5s';\nCREATE INDEX CONCURRENTLY IF NOT EXISTS "T_name_idx" ON "s"."T" ("name");\n`,
    });
    expect(res.output).toMatch(/clean/);
    expect(res.status).toBe(0);
  });

  it("lints a CONCURRENTLY index in a transactional migration as the error it would be", () => {
    const res = lint({ "1_init": INIT, "2_in_tx": `SET LOCAL lock_timeout = '5s';\nCREATE INDEX CONCURRENTLY "T_name_idx" ON "s"."T" ("name");\n` });
    expect(res.status).toBe(1);
    expect(res.output).toMatch(/ban-concurrent-index-creation-in-transaction/);
  });
});

describe(".squawk.toml", () => {
  const config = readFileSync(path.join(ROOT, ".squawk.toml"), "utf8");
  /** The lines of one array's body. */
  const body = (key: string) => new RegExp(`^${key} = \\[\\n([\\s\\S]*?)^\\]`, "m").exec(config)?.[1]?.split("\n") ?? [];

  it("says why right above every excluded rule", () => {
    const lines = body("excluded_rules");
    const entries = lines.flatMap((line, i) => (/^\s*"/.test(line) ? [{ rule: line.trim(), above: lines[i - 1]?.trim() ?? "" }] : []));
    expect(entries.length).toBeGreaterThan(0);
    for (const { rule, above } of entries) expect({ rule, reason: above.startsWith("#") }).toEqual({ rule, reason: true });
  });

  it("excludes by name only migrations that exist, released before the lint (the reason above the list)", () => {
    expect(config).toMatch(/# Released before the lint; rewriting applied migrations would change their checksums[^\n]*\n(#[^\n]*\n)*excluded_paths = \[/);
    const paths = body("excluded_paths").filter((l) => /^\s*"/.test(l));
    expect(paths.length).toBeGreaterThan(0);
    for (const line of paths) {
      const dir = /"\*\/(.+)\/\*"/.exec(line)?.[1];
      expect({ line, exists: dir !== undefined && existsSync(path.join(ROOT, "services", dir, "migration.sql")) }).toEqual({ line, exists: true });
    }
  });
});
