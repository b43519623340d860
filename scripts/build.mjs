#!/usr/bin/env node
// `pnpm build`: compiles every deployable to one CommonJS file with esbuild, so production runs plain
// `node dist/main.js` (one process per service, no transpiler loaded), and runs the `build` script of
// each package published on its own (packages/client: JavaScript and .d.ts by tsc). `--if-stale` rebuilds only when
// a bundled source file, the lockfile or this script changed since the last build; `pnpm start`, every
// service's `start` script and the test run call it, so nobody runs output older than the sources.
//
// What is bundled: the workspace's own TypeScript (packages/*, services/*, infra/standalone), found by
// following imports from each entry point (no file lists to keep). What is not: everything under
// node_modules. Third-party code is already JavaScript, and several packages load files relative to
// themselves (PGlite's wasm and data files, Prisma's query compiler, swagger-ui-dist's assets), so a
// bare import stays a require() of the exact file Node would load from the importing source file,
// written relative to the output file. One bundle therefore resolves each service's own dependencies
// even though pnpm does not hoist them (the single-process launcher bundles all four services).
// `__dirname` and `__filename` in workspace sources keep meaning the source file's folder and file
// (migrations are found as `path.resolve(__dirname, "../prisma/migrations")`).
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const SELF = fileURLToPath(import.meta.url);
const STAMP = path.join(ROOT, "node_modules", ".cache", "crm-build", "stamp.json");
const LOCKFILE = path.join(ROOT, "pnpm-lock.yaml");

/** Every deployable entry point: each service's main, the single-process launcher, package CLIs and workers. */
function entryPoints() {
  const entries = [];
  const add = (source, outfile) => {
    if (existsSync(path.join(ROOT, source))) entries.push({ source, outfile });
  };
  for (const service of readdirSync(path.join(ROOT, "services")).sort()) {
    add(`services/${service}/src/main.ts`, `services/${service}/dist/main.js`);
  }
  add("infra/standalone/src/start.ts", "infra/standalone/dist/start.js");
  add("infra/standalone/src/distributed.ts", "infra/standalone/dist/distributed.js");
  // A package's CLIs, and its worker threads' code (a worker starts from a file of its own).
  for (const pkg of readdirSync(path.join(ROOT, "packages")).sort()) {
    for (const kind of ["cli", "workers"]) {
      const dir = path.join(ROOT, "packages", pkg, "src", kind);
      if (!existsSync(dir)) continue;
      for (const file of readdirSync(dir)
        .filter((f) => f.endsWith(".ts") && !f.endsWith(".test.ts"))
        .sort()) {
        add(`packages/${pkg}/src/${kind}/${file}`, `packages/${pkg}/dist/${kind}/${file.replace(/\.ts$/, ".js")}`);
      }
    }
  }
  return entries;
}

/**
 * Workspace libraries published as packages of their own (packages/client): each has a `build` script
 * of its own (tsc, JavaScript and .d.ts into dist/), run here so an install, `pnpm build` and every
 * start or test run leave it as current as the bundles. Its inputs are its sources and build files.
 */
function packageBuilds() {
  const builds = [];
  for (const pkg of readdirSync(path.join(ROOT, "packages")).sort()) {
    const dir = path.join(ROOT, "packages", pkg);
    const manifest = path.join(dir, "package.json");
    if (!existsSync(manifest) || !JSON.parse(readFileSync(manifest, "utf8")).scripts?.build) continue;
    const inputs = [manifest, path.join(dir, "tsconfig.build.json"), ...sourceFiles(path.join(dir, "src"))].filter((file) => existsSync(file));
    builds.push({ dir, output: path.join(dir, "dist/index.js"), inputs });
  }
  return builds;
}

function sourceFiles(dir) {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const file = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(file);
    return entry.name.endsWith(".ts") && !entry.name.endsWith(".test.ts") ? [file] : [];
  });
}

/** Runs a package's own `build` script (npm puts its node_modules/.bin on PATH, as pnpm would). */
function buildPackage({ dir }) {
  const run = spawnSync("npm", ["run", "--silent", "build"], { cwd: dir, stdio: "inherit" });
  if (run.status !== 0) throw new Error(`${path.relative(ROOT, dir)}: its build script failed`);
}

const isInNodeModules = (file) => file.split(path.sep).includes("node_modules");
const toPosix = (p) => p.split(path.sep).join("/");

/** Bare imports of third-party packages stay external, pointing at the file Node would load. */
function externalDependencies(outDir) {
  return {
    name: "external-dependencies",
    setup(build) {
      build.onResolve({ filter: /^[^./]/ }, (args) => {
        if (args.path.startsWith("node:")) return { path: args.path, external: true };
        const importer = args.importer || path.join(args.resolveDir, "index.ts");
        let resolved;
        try {
          resolved = createRequire(importer).resolve(args.path);
        } catch {
          return undefined; // let esbuild report it with the importer's location
        }
        if (!path.isAbsolute(resolved)) return { path: args.path, external: true }; // a Node builtin
        if (!isInNodeModules(resolved)) return undefined; // a workspace package: bundle its sources
        let relative = toPosix(path.relative(outDir, resolved));
        if (!relative.startsWith(".")) relative = `./${relative}`;
        return { path: relative, external: true };
      });
    },
  };
}

/** `__dirname`/`__filename` in a workspace source file mean that file's location, not the bundle's. */
function sourceLocations(outDir) {
  return {
    name: "source-locations",
    setup(build) {
      build.onLoad({ filter: /\.ts$/ }, async (args) => {
        if (isInNodeModules(args.path)) return undefined;
        let contents = readFileSync(args.path, "utf8");
        if (/\b__(dirname|filename)\b/.test(contents)) {
          const dir = JSON.stringify(toPosix(path.relative(outDir, path.dirname(args.path))) || ".");
          const file = JSON.stringify(toPosix(path.relative(outDir, args.path)));
          contents =
            `const __crm_path = require("node:path");\n` +
            contents.replace(/\b__dirname\b/g, `__crm_path.resolve(__dirname, ${dir})`).replace(/\b__filename\b/g, `__crm_path.resolve(__dirname, ${file})`);
        }
        return { contents, loader: "ts" };
      });
    },
  };
}

async function bundle({ source, outfile }) {
  const outPath = path.join(ROOT, outfile);
  const outDir = path.dirname(outPath);
  // Loaded only when building: the staleness check on every start stays cheap.
  const esbuild = await import("esbuild");
  const result = await esbuild.build({
    absWorkingDir: ROOT,
    entryPoints: [source],
    outfile,
    bundle: true,
    platform: "node",
    format: "cjs",
    target: "node20",
    // import() of an external package becomes require(): the same resolution (and the same module
    // instance) as every other import of it, as under tsx.
    supported: { "dynamic-import": false },
    sourcemap: "linked",
    sourcesContent: false,
    legalComments: "none",
    logLevel: "warning",
    metafile: true,
    write: false,
    plugins: [externalDependencies(outDir), sourceLocations(outDir)],
  });
  for (const file of result.outputFiles) writeAtomically(file.path, file.contents);
  return Object.keys(result.metafile.inputs).map((input) => path.join(ROOT, input));
}

/** A process starting while another builds never reads a half-written bundle. */
function writeAtomically(file, contents) {
  mkdirSync(path.dirname(file), { recursive: true });
  const temporary = `${file}.${process.pid}.tmp`;
  writeFileSync(temporary, contents);
  renameSync(temporary, file);
}

function fingerprint(files) {
  const hash = createHash("sha256");
  for (const file of [...new Set(files)].sort()) {
    hash.update(path.relative(ROOT, file)).update("\0");
    hash.update(existsSync(file) ? readFileSync(file) : "(missing)").update("\0");
  }
  return hash.digest("hex");
}

function readStamp() {
  try {
    return JSON.parse(readFileSync(STAMP, "utf8"));
  } catch {
    return undefined;
  }
}

/** Stale when an output is missing or any input (as recorded by the last build) changed. */
function isStale(entries, packages) {
  const stamp = readStamp();
  if (!stamp) return true;
  if (entries.some((e) => !existsSync(path.join(ROOT, e.outfile)))) return true;
  if (packages.some((p) => !existsSync(p.output))) return true;
  // A package's new source file is an input the last build could not record.
  const recorded = new Set(stamp.inputs);
  if (packages.some((p) => p.inputs.some((input) => !recorded.has(path.relative(ROOT, input))))) return true;
  if (JSON.stringify(entries) !== JSON.stringify(stamp.entries)) return true;
  return fingerprint(stamp.inputs.map((i) => path.join(ROOT, i))) !== stamp.fingerprint;
}

/** A fresh embedded database starts from initdb's output made here once (packages/database/src/pglite.ts). */
function makePgliteTemplate() {
  const cli = path.join(ROOT, "packages/database/dist/cli/pglite-template.js");
  if (!existsSync(cli)) return;
  const run = spawnSync(process.execPath, [cli], { cwd: ROOT, stdio: "inherit" });
  if (run.status !== 0) throw new Error("the PGlite data directory template could not be made");
}

export async function build({ ifStale = false, quiet = false } = {}) {
  const entries = entryPoints();
  const packages = packageBuilds();
  if (ifStale && !isStale(entries, packages)) return false;
  const started = Date.now();
  const inputs = (await Promise.all(entries.map(bundle))).flat();
  makePgliteTemplate();
  for (const pkg of packages) {
    buildPackage(pkg);
    inputs.push(...pkg.inputs);
  }
  inputs.push(SELF, LOCKFILE);
  const unique = [...new Set(inputs)].sort();
  writeAtomically(STAMP, JSON.stringify({ entries, inputs: unique.map((i) => path.relative(ROOT, i)), fingerprint: fingerprint(unique) }));
  if (!quiet) process.stderr.write(`built ${entries.length} bundles and ${packages.length} package${packages.length === 1 ? "" : "s"} in ${Date.now() - started} ms\n`);
  return true;
}

if (process.argv[1] && path.resolve(process.argv[1]) === SELF) {
  const args = process.argv.slice(2);
  build({ ifStale: args.includes("--if-stale"), quiet: args.includes("--quiet") }).catch((err) => {
    process.stderr.write(`build failed: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  });
}
