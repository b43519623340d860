// The previous release of each service, built as production builds it, for the mixed-version test
// (issue 38 item 2): a service must work beside the current release of its neighbours, since teams
// roll one service at a time. The previous release is the newest `v*` tag before HEAD (docs/operations.md,
// "Releases"); without one, each service's previous version is the commit before its latest change.
// Each distinct commit is exported (`git archive`) to a temporary folder once, installed with the
// lockfile of that commit (`pnpm install --frozen-lockfile`, offline from this machine's store), and
// only the services the test starts from it are made ready: their Prisma clients generated and their
// bundles built by that commit's own build script. The folder is reused by later runs on this machine.
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { packageScript, pnpm, ROOT, run } from "./harness";

export const SERVICE_NAMES = ["identity", "crm-records", "webhook-delivery", "gateway"] as const;
export type ServiceName = (typeof SERVICE_NAMES)[number];

export interface PreviousVersion {
  /** The commit a service's previous version is built from. */
  commit: string;
  /** How it was chosen: the tag's name, or "before <commit>". */
  label: string;
}

function git(args: string[]): string | undefined {
  const out = spawnSync("git", args, { cwd: ROOT, encoding: "utf8" });
  return out.status === 0 ? out.stdout.trim() : undefined;
}

/**
 * Each service's previous version: the newest `v*` tag reachable from HEAD's parent (so a tag on HEAD
 * itself is not its own previous release), else the first parent of the newest commit on main's own
 * history (first parents) that changed the service's folder. Undefined when the history does not go back that far (a shallow clone).
 */
export function previousVersions(): Record<ServiceName, PreviousVersion> | undefined {
  const tag = git(["describe", "--tags", "--abbrev=0", "--match", "v*", "HEAD^"]);
  const tagged = tag ? git(["rev-parse", `${tag}^{commit}`]) : undefined;
  const versions = {} as Record<ServiceName, PreviousVersion>;
  for (const service of SERVICE_NAMES) {
    if (tag && tagged) {
      versions[service] = { commit: tagged, label: tag };
      continue;
    }
    // Along main's own history (first parents): a merged branch's intermediate commits never were a release, and need not build.
    const changed = git(["log", "--first-parent", "-n", "1", "--format=%H", "HEAD", "--", `services/${service}`]);
    const before = changed ? git(["rev-parse", "--verify", "--quiet", `${changed}^`]) : undefined;
    if (!before) return undefined;
    versions[service] = { commit: before, label: `before ${changed!.slice(0, 12)}` };
  }
  return versions;
}

/** The services whose previous version is `commit`, per commit (a tag is every service's). */
export function servicesByCommit(versions: Record<ServiceName, PreviousVersion>): Map<string, ServiceName[]> {
  const byCommit = new Map<string, ServiceName[]>();
  for (const service of SERVICE_NAMES) byCommit.set(versions[service].commit, [...(byCommit.get(versions[service].commit) ?? []), service]);
  return byCommit;
}

/**
 * What the exported tree's build need not make when only `services` are started from it: the
 * other deployables' entry points (the build bundles every entry file it finds: the other services'
 * mains, the single-process launchers, the packages' CLIs: migrations run from this checkout's, and the
 * PGlite template is made only by its CLI), and the compile of the client library published on its own
 * (a package's `build` script). Workers stay: a service may start one. Sources a needed bundle imports
 * are never among them, else its build fails loudly.
 */
function leaveOutUnneeded(dir: string, services: readonly ServiceName[]): void {
  for (const service of readdirSync(path.join(dir, "services"))) {
    if (!(services as readonly string[]).includes(service)) rmSync(path.join(dir, "services", service, "src/main.ts"), { force: true });
  }
  rmSync(path.join(dir, "infra/standalone/src"), { recursive: true, force: true });
  for (const pkg of readdirSync(path.join(dir, "packages"))) {
    rmSync(path.join(dir, "packages", pkg, "src/cli"), { recursive: true, force: true });
    const manifestPath = path.join(dir, "packages", pkg, "package.json");
    if (!existsSync(manifestPath)) continue;
    const manifest = JSON.parse(readFileSync(manifestPath, "utf8")) as { scripts?: Record<string, string> };
    if (!manifest.scripts?.build) continue;
    delete manifest.scripts.build;
    writeFileSync(manifestPath, JSON.stringify(manifest, null, 2));
  }
}

/**
 * The folder of `commit`'s build of `services` (exported, installed and built once per machine), each
 * under `services/<name>` with its `dist/main.js`.
 */
export async function buildOf(commit: string, services: readonly ServiceName[]): Promise<string> {
  const dir = path.join(os.tmpdir(), `crm-release-${commit.slice(0, 12)}-${[...services].sort().join("+")}`);
  const done = path.join(dir, ".built");
  if (existsSync(done)) return dir;
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const exported = spawnSync("sh", ["-c", `git archive ${commit} | tar -x -C "${dir}"`], { cwd: ROOT, encoding: "utf8" });
  if (exported.status !== 0) throw new Error(`git archive ${commit} failed: ${exported.stderr}`);
  leaveOutUnneeded(dir, services);
  const env = { ...process.env, CI: "true" };
  // Without the root's postinstall (every service's Prisma client and every bundle): the steps below make the needed ones.
  const [command, args] = pnpm(["install", "--frozen-lockfile", "--offline", "--ignore-scripts"]);
  let installed = await run(command, args, { cwd: dir, env });
  // A dependency that commit needs and this machine's store lacks: the registry has it.
  if (installed.status !== 0)
    installed = await run(
      command,
      args.filter((a) => a !== "--offline"),
      { cwd: dir, env },
    );
  if (installed.status !== 0) throw new Error(`installing ${commit} failed:\n${installed.stdout}\n${installed.stderr}`);
  // The postinstall's two steps, for the needed services only: their Prisma clients (each package's
  // db:generate script, run as pnpm runs it, without a pnpm start-up per call), then the build.
  await Promise.all(
    services.map(async (service) => {
      const manifest = JSON.parse(readFileSync(path.join(dir, "services", service, "package.json"), "utf8")) as { scripts?: Record<string, string> };
      if (!manifest.scripts?.["db:generate"]) return;
      const generate = packageScript(`services/${service}`, "db:generate", env, dir);
      const generated = await run(generate.command, generate.args, generate.options);
      if (generated.status !== 0) throw new Error(`generating ${service}'s Prisma client of ${commit} failed:\n${generated.stdout}\n${generated.stderr}`);
    }),
  );
  const built = await run(process.execPath, ["scripts/build.mjs"], { cwd: dir, env });
  if (built.status !== 0) throw new Error(`building ${commit} failed:\n${built.stdout}\n${built.stderr}`);
  writeFileSync(done, `${new Date().toISOString()}\n`);
  return dir;
}
