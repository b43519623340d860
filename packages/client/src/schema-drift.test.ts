// The committed src/generated/schema.ts must be exactly what the generator makes from the current
// OpenAPI document, so a change to any endpoint's schema shows up as a type change in the client.
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
// Type-only: brings the script into `pnpm typecheck` (the root tsconfig includes only src/). It runs in
// a child process below because openapi-typescript needs ESM-only packages that jest cannot require.
import type {} from "../scripts/generate";

const PACKAGE = path.resolve(__dirname, "..");
const TSX = path.resolve(PACKAGE, "../../node_modules/.bin/tsx");

it("src/generated/schema.ts matches the OpenAPI document (regenerate: pnpm --filter @crm/client generate)", () => {
  const run = spawnSync(TSX, ["scripts/generate.ts", "--stdout"], { cwd: PACKAGE, encoding: "utf8", maxBuffer: 64 * 1024 * 1024, timeout: 60_000 });
  if (run.status !== 0) throw new Error(`scripts/generate.ts failed (${run.error?.message ?? `exit ${run.status}`}):\n${run.stderr}`);
  const committed = readFileSync(path.join(PACKAGE, "src/generated/schema.ts"), "utf8");
  if (committed !== run.stdout) {
    const a = committed.split("\n");
    const b = run.stdout.split("\n");
    let line = 0;
    while (line < Math.max(a.length, b.length) && a[line] === b[line]) line++;
    throw new Error(
      "packages/client/src/generated/schema.ts is out of date with the OpenAPI document.\n" +
        "Regenerate it with `pnpm --filter @crm/client generate` and commit the result.\n" +
        `First difference at line ${line + 1}:\n  committed: ${JSON.stringify(a[line])}\n  generated: ${JSON.stringify(b[line])}`,
    );
  }
});
