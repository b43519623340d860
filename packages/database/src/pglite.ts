// How this product runs PGlite (embedded PostgreSQL in wasm), and the initialised data directory
// its first start copies instead of running initdb.
//
// Measured (docs/performance.md, "Footprint and start-up"): PGlite's RSS is about 180 MB plus
// shared_buffers, which PostgreSQL touches in full at start, so the default 128 MB costs 128 MB
// whether or not the data needs it. 32 MB holds the embedded product's working set many times over
// (one machine, one user's data) and leaves the whole product well under its 400 MB budget.
// initdb is the other cost: inside wasm it takes 5-13 s and peaks at ~800 MB, on every fresh data
// directory (each first start, each test's temporary one). Its output depends only on the PGlite
// version, so `pnpm build` makes it once (`cli/pglite-template.ts`) and a fresh directory starts as a
// plain file copy of it (PGlite's own loadDataDir would unpack a tarball through JavaScript buffers
// and the wasm filesystem: more CPU, and ~80 MB of memory the process keeps).
import { PGlite } from "@electric-sql/pglite";
import { PreparedPGlite } from "./prepared-pglite";
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync } from "node:fs";
import path from "node:path";

/** PostgreSQL settings for the embedded database (PGlite's defaults, plus these). */
export const PGLITE_SETTINGS = ["shared_buffers=32MB"] as const;

function startParams(): string[] {
  return [...PGlite.defaultStartParams, ...PGLITE_SETTINGS.flatMap((setting) => ["-c", setting])];
}

function pgliteVersion(): string {
  let dir = path.dirname(require.resolve("@electric-sql/pglite"));
  for (;;) {
    const manifest = path.join(dir, "package.json");
    if (existsSync(manifest)) {
      const { name, version } = JSON.parse(readFileSync(manifest, "utf8")) as { name?: string; version?: string };
      if (name === "@electric-sql/pglite" && version) return version;
    }
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error("cannot find @electric-sql/pglite's package.json");
    dir = parent;
  }
}

/** Where `pnpm build` leaves the initialised data directory for this PGlite version. */
export function templatePath(): string {
  return path.resolve(__dirname, "../dist/pglite-template", `pgdata-${pgliteVersion()}`);
}

const isEmpty = (dir: string) => !existsSync(dir) || readdirSync(dir).length === 0;

/** Opens (creating when needed) the PGlite data directory `dir`; its queries reuse prepared statements. */
export async function createPglite(dir: string): Promise<PreparedPGlite> {
  const template = templatePath();
  if (isEmpty(dir) && existsSync(path.join(template, "PG_VERSION"))) cpSync(template, dir, { recursive: true });
  mkdirSync(dir, { recursive: true });
  return PreparedPGlite.open(dir, { startParams: startParams() });
}

/** Runs initdb once and keeps its output; true when it had to (the template was missing). */
export async function ensureTemplate(): Promise<boolean> {
  const target = templatePath();
  if (existsSync(path.join(target, "PG_VERSION"))) return false;
  const temporary = `${target}.${process.pid}.tmp`;
  rmSync(temporary, { recursive: true, force: true });
  mkdirSync(temporary, { recursive: true });
  const pglite = await PGlite.create(temporary, { startParams: startParams() });
  await pglite.close();
  rmSync(target, { recursive: true, force: true });
  renameSync(temporary, target);
  return true;
}
