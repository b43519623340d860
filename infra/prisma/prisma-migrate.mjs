#!/usr/bin/env node
// Offline Prisma Migrate for one service. Prisma 7 needs a native schema engine that cannot be
// downloaded here; Prisma 6.19's CLI runs a wasm engine over a driver adapter instead.
// Usage (from the repo root, DATABASE_URL = a PostgreSQL role with CREATEDB, for the shadow database):
//   node infra/prisma/prisma-migrate.mjs <service-dir> new <name>   write the next migration from schema changes
//   node infra/prisma/prisma-migrate.mjs <service-dir> check        exit 2 when schema.prisma has unmigrated changes
import { spawnSync } from "node:child_process";
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, "../..");
const require = createRequire(import.meta.url);
const [serviceDir, command, name] = process.argv.slice(2);
if (!serviceDir || !["new", "check"].includes(command ?? "") || (command === "new" && !name)) {
  console.error("usage: prisma-migrate.mjs <service-dir> new <name> | check");
  process.exit(64);
}
const service = path.resolve(root, serviceDir);
const migrations = path.join(service, "prisma/migrations");
mkdirSync(migrations, { recursive: true });
const outDir = path.join(root, "node_modules/.cache/prisma-migrate", path.basename(service));
mkdirSync(outDir, { recursive: true });
// Prisma 6 wants `url` in the datasource; Prisma 7 forbids it. Generators are dropped so the v6 CLI
// can never overwrite the Prisma 7 client.
let schema = readFileSync(path.join(service, "prisma/schema.prisma"), "utf8").replace(/^\s*generator\s+\w+\s*\{[^}]*\}\s*$/gm, "");
schema = schema.replace(/(datasource\s+\w+\s*\{)/, '$1\n  url = env("DATABASE_URL")');
const derived = path.join(outDir, "schema.prisma");
writeFileSync(derived, schema);

const cli = require.resolve("prisma-migrate-engine/build/index.js");
const stub = path.join(here, "no-native-schema-engine.sh");
function run(args) {
  return spawnSync(process.execPath, ["--require", path.join(here, "unref-wasm-timers.cjs"), cli, ...args, "--config", path.join(here, "migrate.config.ts")], {
    cwd: root,
    encoding: "utf8",
    stdio: ["ignore", "pipe", "inherit"],
    env: {
      ...process.env,
      PRISMA_MIGRATE_SCHEMA: derived,
      PRISMA_MIGRATE_MIGRATIONS: migrations,
      PRISMA_SCHEMA_ENGINE_BINARY: stub,
      PRISMA_QUERY_ENGINE_LIBRARY: stub,
      PRISMA_HIDE_UPDATE_MESSAGE: "1",
      CHECKPOINT_DISABLE: "1",
    },
  });
}
const hasMigrations = readdirSync(migrations, { withFileTypes: true }).some((e) => e.isDirectory());
const from = hasMigrations ? ["--from-migrations", migrations] : ["--from-empty"];
if (command === "check") {
  const res = run(["migrate", "diff", ...from, "--to-schema-datamodel", derived, "--exit-code"]);
  process.stdout.write(res.stdout ?? "");
  if (res.status === 2) console.error(`${serviceDir}: schema.prisma has changes without a migration`);
  process.exit(res.status ?? 1);
}
const res = run(["migrate", "diff", ...from, "--to-schema-datamodel", derived, "--script"]);
if (res.status !== 0) process.exit(res.status ?? 1);
res.stdout = res.stdout
  .split("\n")
  .filter((line) => !line.startsWith("Loaded Prisma config"))
  .join("\n");
if (/^-- This is an empty migration\.\s*$/m.test(res.stdout) || res.stdout.trim() === "") {
  console.log("no schema changes");
  process.exit(0);
}
const stamp = new Date().toISOString().replace(/[-:T]/g, "").slice(0, 14);
const dir = path.join(migrations, `${stamp}_${name}`);
mkdirSync(dir, { recursive: true });
writeFileSync(path.join(dir, "migration.sql"), res.stdout);
writeFileSync(path.join(migrations, "migration_lock.toml"), 'provider = "postgresql"\n');
console.log(`wrote ${path.relative(root, dir)}/migration.sql`);
