// The docs a clone carries must work in that clone: every relative link in the README and the docs
// resolves to a file or folder inside the repository, and every #anchor to a heading (or an explicit
// `<a id>`) of the Markdown file it names. Also the length budgets of the two pages a newcomer reads
// first: README.md (at most 250 lines) and docs/performance.md, a decision record (at most 400), and the
// receiver the README's walk-through runs.
import { spawn } from "node:child_process";
import { createHash, createHmac } from "node:crypto";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { freePort, waitFor } from "@crm/testing";

const ROOT = path.resolve(__dirname, "..");

/** The Markdown files whose links are checked, relative to the repository root. */
function checkedFiles(): string[] {
  const files = ["README.md", "infra/README.md", "bench/README.md"];
  const inFolder = (folder: string) =>
    readdirSync(path.join(ROOT, folder))
      .filter((name) => name.endsWith(".md"))
      .map((name) => `${folder}/${name}`);
  files.push(...inFolder("docs"));
  for (const parent of ["services", "packages"]) {
    for (const name of readdirSync(path.join(ROOT, parent))) {
      const readme = `${parent}/${name}/README.md`;
      if (existsSync(path.join(ROOT, readme))) files.push(readme);
    }
  }
  return files;
}

/** The text outside fenced code blocks and inline code spans, where a link is a link. */
function prose(markdown: string): string {
  return markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, "").replace(/`[^`\n]*`/g, "");
}

/** GitHub's heading anchor: lower case, punctuation dropped, spaces as hyphens. */
function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/<[^>]+>/g, "")
    .replace(/[^\p{L}\p{N}\s_-]/gu, "")
    .replace(/\s/g, "-");
}

/** The anchors a Markdown file offers: one per heading (repeats numbered as GitHub does) and each `<a id>`. */
function anchorsOf(file: string): Set<string> {
  const text = readFileSync(file, "utf8").replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, "");
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const [, heading] of text.matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const base = slug(heading!.replace(/`/g, "").replace(/\[([^\]]*)\]\([^)]*\)/g, "$1"));
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    anchors.add(n === 0 ? base : `${base}-${n}`);
  }
  for (const [, id] of text.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) anchors.add(id!);
  return anchors;
}

/** Every inline link and image target of a file's prose: `[text](target)`, `![alt](target "title")`. */
function linksOf(markdown: string): string[] {
  const targets: string[] = [];
  for (const [, target] of prose(markdown).matchAll(/!?\[(?:[^\]\\]|\\.)*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) targets.push(target!);
  return targets;
}

/** Why `target`, linked from `file`, does not resolve inside the repository; undefined when it does. */
function brokenBecause(file: string, target: string): string | undefined {
  if (/^[a-z][a-z0-9+.-]*:/i.test(target)) return undefined; // https:, mailto: ...: not the repository's
  const [pathPart, anchor] = target.split("#", 2) as [string, string | undefined];
  const resolved = pathPart === "" ? path.join(ROOT, file) : path.resolve(path.dirname(path.join(ROOT, file)), decodeURIComponent(pathPart));
  const relative = path.relative(ROOT, resolved);
  if (relative.startsWith("..") || path.isAbsolute(relative)) return "points outside the repository (dead in a clone)";
  if (!existsSync(resolved)) return "no such file or folder";
  if (anchor === undefined || anchor === "") return undefined;
  if (statSync(resolved).isDirectory() || !resolved.endsWith(".md")) return undefined;
  return anchorsOf(resolved).has(decodeURIComponent(anchor).toLowerCase()) ? undefined : `no heading or <a id> "${anchor}" in ${relative}`;
}

describe("documentation", () => {
  it("computes GitHub's heading anchors", () => {
    expect(slug("Lists: pagination, filters, sorting, relations")).toBe("lists-pagination-filters-sorting-relations");
    expect(slug("Filters (extensions §E1.5)")).toBe("filters-extensions-e15");
    expect(slug("D3. Early forward of reads")).toBe("d3-early-forward-of-reads");
    expect(slug("page, perPage")).toBe("page-perpage");
  });

  it("finds broken links, anchors and links out of the repository", () => {
    expect(brokenBecause("README.md", "../shared/spec/interface.md")).toMatch(/outside the repository/);
    expect(brokenBecause("README.md", "docs/no-such-page.md")).toMatch(/no such file/);
    expect(brokenBecause("README.md", "docs/performance.md#no-such-heading")).toMatch(/no heading/);
    expect(brokenBecause("README.md", "https://example.com/x")).toBeUndefined();
    expect(linksOf('[a](x.md) `[b](y.md)`\n```\n[c](z.md)\n```\n![d](e.png "t")')).toEqual(["x.md", "e.png"]);
  });

  it("every relative link in README.md, docs/ and the services' and packages' READMEs resolves inside the repository", () => {
    const broken: string[] = [];
    for (const file of checkedFiles()) {
      for (const target of linksOf(readFileSync(path.join(ROOT, file), "utf8"))) {
        const why = brokenBecause(file, target);
        if (why) broken.push(`${file}: (${target}) ${why}`);
      }
    }
    expect(broken).toEqual([]);
  });

  it.each([
    ["README.md", 250],
    ["docs/performance.md", 400],
  ])("%s stays within %i lines", (file, limit) => {
    const lines = readFileSync(path.join(ROOT, file), "utf8").replace(/\n$/, "").split("\n").length;
    expect(lines).toBeLessThanOrEqual(limit);
  });

  it("docs/examples/receiver.js answers 204 to a correctly signed delivery and 401 to anything else", async () => {
    const secret = "whsec_walkthrough";
    const port = await freePort();
    const receiver = spawn(process.execPath, [path.join(ROOT, "docs/examples/receiver.js")], {
      env: { PATH: process.env.PATH, PORT: String(port), WEBHOOK_SECRET: secret },
      stdio: ["ignore", "pipe", "inherit"],
    });
    let printed = "";
    receiver.stdout!.on("data", (chunk: Buffer) => (printed += chunk.toString("utf8")));
    try {
      await waitFor(() => printed.includes("listening"), 10_000);
      const body = JSON.stringify({ event: "client.created", data: { id: "c1", note: "é" }, businessId: "b1", timestamp: "2026-01-01T00:00:00.000Z" });
      const key = createHash("sha256").update(secret).digest("hex");
      const post = (signature: string) =>
        fetch(`http://127.0.0.1:${port}/hooks`, {
          method: "POST",
          headers: { "content-type": "application/json", "x-service-signature": signature, "x-service-delivery-id": "d1" },
          body,
          signal: AbortSignal.timeout(5_000),
        });
      expect((await post(`sha256=${createHmac("sha256", key).update(body).digest("hex")}`)).status).toBe(204);
      expect((await post(`sha256=${createHmac("sha256", secret).update(body).digest("hex")}`)).status).toBe(401);
      expect((await post("sha256=00")).status).toBe(401);
      await waitFor(() => printed.includes("verified d1 client.created"), 5_000);
    } finally {
      receiver.kill("SIGTERM");
    }
  });
});
