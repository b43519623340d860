#!/usr/bin/env node
// `pnpm lint:migrations` (and `pnpm test`): squawk, the PostgreSQL migration linter, over every migration
// newer than each service's first one (the first creates empty tables: nothing to block), so that none
// blocks writes while it runs (docs/operations.md, "Schema changes across replicas"). Its rules and
// exclusions, each with its reason: .squawk.toml. A migration marked `--! no-transaction` on its first
// line (packages/database/src/migrations.ts) is linted as running outside a transaction, the others as
// wrapped in one, as the runner runs them.
// Usage: node scripts/lint-migrations.mjs [services-dir]   (default: the repo's services/)
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const servicesDir = path.resolve(process.argv[2] ?? path.join(root, "services"));
const squawk = path.join(root, "node_modules/.bin/squawk");

const inTransaction = [];
const outside = [];
for (const service of readdirSync(servicesDir).sort()) {
  const dir = path.join(servicesDir, service, "prisma/migrations");
  if (!existsSync(dir)) continue;
  const names = readdirSync(dir, { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .map((e) => e.name)
    .sort();
  for (const name of names.slice(1)) {
    const file = path.relative(process.cwd(), path.join(dir, name, "migration.sql"));
    const first = readFileSync(file, "utf8").split("\n", 1)[0].trim();
    (first === "--! no-transaction" ? outside : inTransaction).push(file);
  }
}

let failed = false;
for (const [files, mode] of [
  [inTransaction, "--assume-in-transaction"],
  [outside, "--no-assume-in-transaction"],
]) {
  if (files.length === 0) continue;
  const res = spawnSync(squawk, ["--config", path.join(root, ".squawk.toml"), mode, "--no-error-on-unmatched-pattern", "--reporter", "gcc", ...files], {
    stdio: ["ignore", "inherit", "pipe"],
    encoding: "utf8",
  });
  // Its note that every file of a group was excluded (by .squawk.toml's excluded_paths) is no finding.
  process.stderr.write(res.stderr.replace(/^Failed to find files for provided patterns.*\n?/gm, ""));
  if (res.status !== 0) failed = true;
}
const total = inTransaction.length + outside.length;
console.log(`squawk: ${total} migrations after the first ones, ${outside.length} outside a transaction, exclusions in .squawk.toml${failed ? ": see above" : ": clean"}`);
process.exit(failed ? 1 : 0);
