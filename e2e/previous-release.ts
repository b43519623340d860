// The previous release of each service, built as production builds it, for the mixed-version test
// (issue 38 item 2): a service must work beside the current release of its neighbours, since teams
// roll one service at a time. The previous release is the newest `v*` tag before HEAD (docs/operations.md,
// "Releases"); without one, each service's previous version is the commit before its latest change.
// Each distinct commit is exported (`git archive`) to a temporary folder once, installed with the
// lockfile of that commit (`pnpm install --frozen-lockfile`, which also generates its Prisma clients and
// builds it) and reused by later runs on this machine.
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { pnpm, ROOT, run } from "./harness";

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

/** The folder of `commit`'s build (exported, installed and built once per machine); its services under `services/<name>`. */
export async function buildOf(commit: string): Promise<string> {
  const dir = path.join(os.tmpdir(), `crm-release-${commit.slice(0, 12)}`);
  const done = path.join(dir, ".built");
  if (existsSync(done)) return dir;
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const exported = spawnSync("sh", ["-c", `git archive ${commit} | tar -x -C "${dir}"`], { cwd: ROOT, encoding: "utf8" });
  if (exported.status !== 0) throw new Error(`git archive ${commit} failed: ${exported.stderr}`);
  const [command, args] = pnpm(["install", "--frozen-lockfile", "--offline"]);
  let installed = await run(command, args, { cwd: dir, env: { ...process.env, CI: "true" } });
  // A dependency that commit needs and this machine's store lacks: the registry has it.
  if (installed.status !== 0)
    installed = await run(
      command,
      args.filter((a) => a !== "--offline"),
      { cwd: dir, env: { ...process.env, CI: "true" } },
    );
  if (installed.status !== 0) throw new Error(`installing ${commit} failed:\n${installed.stdout}\n${installed.stderr}`);
  writeFileSync(done, `${new Date().toISOString()}\n`);
  return dir;
}
