// pnpm 10 runs no dependency's install script unless pnpm-workspace.yaml allows it, and ends every
// install with an "Ignored build scripts ... run pnpm approve-builds" box for each one it was not
// told about. Every dependency with an install script is therefore either allowed or refused there,
// by name, and the lists name nothing that no longer has one.
import { existsSync, lstatSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { parse } from "yaml";
import { ROOT } from "./harness";

/** Names of the installed packages that have an install script (as pnpm decides: a lifecycle script or a binding.gyp). */
function packagesWithInstallScripts(): Set<string> {
  const store = path.join(ROOT, "node_modules/.pnpm");
  const names = new Set<string>();
  for (const entry of readdirSync(store)) {
    const modules = path.join(store, entry, "node_modules");
    if (!existsSync(modules)) continue;
    for (const name of readdirSync(modules).flatMap((n) => (n.startsWith("@") ? readdirSync(path.join(modules, n)).map((m) => `${n}/${m}`) : [n]))) {
      const dir = path.join(modules, name);
      // The package itself, not a link to one of its dependencies.
      if (lstatSync(dir).isSymbolicLink() || !existsSync(path.join(dir, "package.json"))) continue;
      const manifest = JSON.parse(readFileSync(path.join(dir, "package.json"), "utf8")) as { name: string; scripts?: Record<string, string> };
      const scripts = manifest.scripts ?? {};
      if (scripts.preinstall || scripts.install || scripts.postinstall || existsSync(path.join(dir, "binding.gyp"))) names.add(manifest.name);
    }
  }
  return names;
}

describe("dependencies' install scripts", () => {
  const workspace = parse(readFileSync(path.join(ROOT, "pnpm-workspace.yaml"), "utf8")) as { onlyBuiltDependencies?: string[]; ignoredBuiltDependencies?: string[] };
  const allowed = workspace.onlyBuiltDependencies ?? [];
  const refused = workspace.ignoredBuiltDependencies ?? [];

  it("are each allowed or refused by name in pnpm-workspace.yaml, so no install ends with pnpm's warning", () => {
    const undecided = [...packagesWithInstallScripts()].filter((name) => !allowed.includes(name) && !refused.includes(name));
    expect(undecided).toEqual([]);
  });

  it("are decided once: no name in both lists, none without an install script", () => {
    expect(allowed.filter((name) => refused.includes(name))).toEqual([]);
    const withScripts = packagesWithInstallScripts();
    expect([...allowed, ...refused].filter((name) => !withScripts.has(name))).toEqual([]);
  });

  it("are declared where pnpm 10 reads them, not in package.json", () => {
    const manifest = JSON.parse(readFileSync(path.join(ROOT, "package.json"), "utf8")) as { pnpm?: Record<string, unknown> };
    expect(Object.keys(manifest.pnpm ?? {}).filter((key) => /BuiltDependencies$/.test(key))).toEqual([]);
  });
});
