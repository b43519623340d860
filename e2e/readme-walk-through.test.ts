// The shell examples of the README and the docs are what a newcomer pastes: one JSON tool throughout
// (node, which every reader of them has), and a walk-through that keeps what it needs in shell
// variables instead of asking the reader to copy ids and secrets by hand.
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { ROOT } from "./harness";

const pages = [
  "README.md",
  ...readdirSync(path.join(ROOT, "docs"))
    .filter((name) => name.endsWith(".md"))
    .map((name) => `docs/${name}`),
];
const shellBlocks = pages.flatMap((page) => [...readFileSync(path.join(ROOT, page), "utf8").matchAll(/```sh\n([\s\S]*?)```/g)].map((match) => match[1]!));

describe("shell examples of the README and docs/", () => {
  it("read JSON with node only, never jq", () => {
    expect(shellBlocks.length).toBeGreaterThan(0);
    expect(shellBlocks.filter((block) => /\bjq\b/.test(block))).toEqual([]);
  });

  it("walk through from sign-up to a verified webhook with no value copied by hand", () => {
    const walkThrough = shellBlocks.find((block) => block.includes("# 1. Sign up"));
    expect(walkThrough).toBeDefined();
    // No placeholder such as <webhook id> or whsec_... for the reader to fill in (comments may show output).
    const commands = walkThrough!
      .split("\n")
      .filter((line) => !line.trimStart().startsWith("#"))
      .join("\n");
    expect(commands.match(/<[a-z][a-z ]*>|whsec_\.\.\./g) ?? []).toEqual([]);
    // The webhook's id and its one-time secret are kept as the answer gives them.
    expect(walkThrough).toMatch(/WEBHOOK_ID=\$\(.*json data\.id\)/);
    expect(walkThrough).toMatch(/SECRET=\$\(.*json data\.secret\)/);
  });
});
