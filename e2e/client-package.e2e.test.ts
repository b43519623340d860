// @crm/client as a user gets it: `npm pack` in packages/client, the tarball installed into a scratch
// project outside the workspace (offline: its runtime dependency, openapi-fetch, is packed from the
// copy installed here, as the registry would serve it), every TypeScript example of its README
// type-checked against the installed package, and its JavaScript calling a running product.
import { execFile } from "node:child_process";
import { createHash, createHmac } from "node:crypto";
import { cpSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { ROOT, startEmbedded } from "./harness";

jest.setTimeout(300_000);

const run = promisify(execFile);
const CLIENT = path.join(ROOT, "packages/client");
const TSC = require.resolve("typescript/bin/tsc");
/** npm without the network, audits, funding notices or install scripts. */
const NPM_OFFLINE = ["--offline", "--no-audit", "--no-fund", "--ignore-scripts", "--loglevel=error"];

/** `npm pack` of the package in `dir` into `into`; the tarball's path. */
async function pack(dir: string, into: string): Promise<string> {
  const { stdout } = await run("npm", ["pack", "--pack-destination", into, "--loglevel=error"], { cwd: dir });
  return path.join(into, stdout.trim().split("\n").pop()!);
}

/**
 * A registry package's tarball, packed from its copy in pnpm's store. The store hard-links files of
 * equal content (openapi-typescript-helpers' three identical .d.ts files are one inode), which tar
 * packs as links that npm does not extract; a plain copy first makes them files again.
 */
async function packInstalled(dir: string, into: string): Promise<string> {
  const copy = mkdtempSync(path.join(os.tmpdir(), "crm-pack-"));
  try {
    cpSync(dir, copy, { recursive: true, dereference: true });
    return await pack(copy, into);
  } finally {
    rmSync(copy, { recursive: true, force: true });
  }
}

/** The folder of a package as installed for `from` (pnpm's real path, not the link). */
function installedPackage(name: string, from: string): string {
  return realpathSync(path.dirname(require.resolve(`${name}/package.json`, { paths: [from] })));
}

/** The ```ts blocks of a Markdown file. */
function typeScriptBlocks(markdown: string): string[] {
  return [...markdown.matchAll(/```ts\n([\s\S]*?)```/g)].map((match) => match[1]!);
}

async function typeCheck(dir: string, compilerOptions: Record<string, unknown>, files: string[]): Promise<string> {
  const config = path.join(dir, `tsconfig.${files.length}.${Object.keys(compilerOptions).length}.json`);
  writeFileSync(
    config,
    JSON.stringify({
      compilerOptions: {
        strict: true,
        noEmit: true,
        skipLibCheck: false,
        target: "es2022",
        types: ["node"],
        typeRoots: [path.join(ROOT, "node_modules/@types")],
        ...compilerOptions,
      },
      files,
    }),
  );
  return run(process.execPath, [TSC, "-p", config], { cwd: dir }).then(
    () => "",
    (err: { stdout?: string }) => err.stdout ?? String(err),
  );
}

describe("@crm/client, packed and installed outside the workspace", () => {
  let project: string;
  let product: Awaited<ReturnType<typeof startEmbedded>>;

  beforeAll(async () => {
    project = mkdtempSync(path.join(os.tmpdir(), "crm-client-user-"));
    const tarballs = path.join(project, "tarballs");
    mkdirSync(tarballs);
    const fetchDir = installedPackage("openapi-fetch", CLIENT);
    // The product starts while the packages are packed (side by side) and installed; kept for afterAll whatever their outcome.
    const starting = startEmbedded();
    starting.catch(() => undefined); // awaited below: an early failure is not an unhandled one
    try {
      const packed = await Promise.all([
        pack(CLIENT, tarballs),
        packInstalled(fetchDir, tarballs),
        packInstalled(installedPackage("openapi-typescript-helpers", fetchDir), tarballs),
      ]);
      writeFileSync(path.join(project, "package.json"), JSON.stringify({ name: "crm-client-user", version: "1.0.0", private: true }));
      await run("npm", ["install", ...NPM_OFFLINE, ...packed], { cwd: project });
    } finally {
      product = await starting;
    }
  });
  afterAll(async () => {
    await product?.stop();
    if (product) rmSync(product.dataDir, { recursive: true, force: true });
    if (project) rmSync(project, { recursive: true, force: true });
  });

  it("ships built JavaScript and types only, with a version and an exports map", () => {
    const manifest = JSON.parse(readFileSync(path.join(project, "node_modules/@crm/client/package.json"), "utf8"));
    expect(manifest).toMatchObject({ name: "@crm/client", version: expect.stringMatching(/^\d+\.\d+\.\d+$/), exports: { ".": { types: "./dist/index.d.ts" } } });
    expect(manifest.private).toBeUndefined();
    expect(Object.keys(manifest.dependencies)).toEqual(["openapi-fetch"]);
  });

  it("type-checks every TypeScript example of its README against the installed package", async () => {
    const blocks = typeScriptBlocks(readFileSync(path.join(CLIENT, "README.md"), "utf8"));
    expect(blocks.length).toBeGreaterThanOrEqual(2);
    // What the examples take as given (ids the reader already has), declared, nothing else.
    const given = "declare const webhookId: string;\ndeclare const id: string;\ndeclare const keyId: string;\nexport {};\n";
    const files = blocks.map((block, i) => {
      const file = `readme-${i}.ts`;
      writeFileSync(path.join(project, file), `${block}\n${given}`);
      return file;
    });
    expect(await typeCheck(project, { module: "esnext", moduleResolution: "bundler", lib: ["es2022", "dom", "dom.iterable"] }, files)).toBe("");
  });

  it("type-checks under Node's own module resolution, and a wrong call fails to", async () => {
    writeFileSync(
      path.join(project, "use.ts"),
      [
        'import { createCrmClient, verifyWebhookSignature, type CrmSchemas } from "@crm/client";',
        'const crm = createCrmClient({ baseUrl: "http://localhost:3000", apiKey: "svc_x" });',
        'export const listed = crm.GET("/api/v1/client", { params: { query: { perPage: 50, where: "isActive:true" } } });',
        'export const ok: boolean = verifyWebhookSignature("whsec_x", Buffer.from("{}"), "sha256=00");',
        'export const name: CrmSchemas["Client"]["firstName"] = "Ada";',
      ].join("\n"),
    );
    writeFileSync(
      path.join(project, "wrong.ts"),
      'import { createCrmClient } from "@crm/client";\ncreateCrmClient({ baseUrl: "x" }).GET("/api/v1/client", { params: { query: { perPage: "50" } } });\n',
    );
    // One compiler run for both (each run type-checks the whole package, ~20 s on a loaded machine): both
    // files are modules, so neither affects the other; use.ts has no error, wrong.ts has its TS2322.
    const output = await typeCheck(project, { module: "node16", moduleResolution: "node16", lib: ["es2022", "dom"] }, ["use.ts", "wrong.ts"]);
    const errors = output.split("\n").filter((line) => /error TS\d+/.test(line));
    expect(errors.filter((line) => !line.startsWith("wrong.ts"))).toEqual([]);
    expect(errors.join("\n")).toMatch(/^wrong\.ts.*error TS2322/);
  });

  it("calls a running product from plain JavaScript, required and imported, and verifies a signature", async () => {
    const secret = "whsec_test";
    const body = '{"event":"client.created"}';
    const signature = `sha256=${createHmac("sha256", createHash("sha256").update(secret).digest("hex")).update(body).digest("hex")}`;
    writeFileSync(
      path.join(project, "call.cjs"),
      `const { createCrmClient, verifyWebhookSignature } = require("@crm/client");
(async () => {
  const baseUrl = process.argv[2];
  const signUp = await createCrmClient({ baseUrl }).POST("/api/v1/auth/sign-up", {
    body: { businessName: "Packed", email: "packed-" + Date.now() + "@example.test", password: "a-long-password" },
  });
  const crm = createCrmClient({ baseUrl, accessToken: signUp.data.data.accessToken });
  const created = await crm.POST("/api/v1/client", { body: { firstName: "Grace", lastName: "Hopper" } });
  const listed = await crm.GET("/api/v1/client", { params: { query: { perPage: 5 } } });
  const refused = await crm.GET("/api/v1/client", { params: { query: { where: "nickname:x" } } });
  console.log(JSON.stringify({
    signUp: signUp.response.status,
    created: [created.response.status, created.data.data.lastName],
    listed: listed.data.meta.total,
    refused: refused.error.error,
    verified: [verifyWebhookSignature(${JSON.stringify(secret)}, ${JSON.stringify(body)}, ${JSON.stringify(signature)}), verifyWebhookSignature("other", ${JSON.stringify(body)}, ${JSON.stringify(signature)})],
  }));
})().catch((err) => { console.error(err); process.exit(1); });
`,
    );
    writeFileSync(path.join(project, "call.mjs"), 'import { createCrmClient } from "@crm/client";\nconsole.log(typeof createCrmClient);\n');
    const { stdout } = await run(process.execPath, ["call.cjs", product.baseUrl], { cwd: project });
    expect(JSON.parse(stdout)).toEqual({
      signUp: 201,
      created: [201, "Hopper"],
      listed: 1,
      refused: { code: 400019, message: "Invalid query format", details: [{ path: "where", message: 'unknown field "nickname" at character 1' }] },
      verified: [true, false],
    });
    expect((await run(process.execPath, ["call.mjs"], { cwd: project })).stdout.trim()).toBe("function");
  });
});
