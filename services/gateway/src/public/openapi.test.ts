import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import SwaggerParser from "@apidevtools/swagger-parser";
import { Spectral, Document } from "@stoplight/spectral-core";
import * as Parsers from "@stoplight/spectral-parsers";
import { oas } from "@stoplight/spectral-rulesets";
import { API_PREFIX, apiRoutes, errorEnvelopeSchema, type Route } from "@crm/contracts";
import { buildOpenApiDocument } from "./openapi";
import { openApiRegistrations } from "./registrations";

jest.setTimeout(180_000);

const run = promisify(execFile);
const GATEWAY = path.resolve(__dirname, "../..");
const bin = (name: string) => path.join(GATEWAY, "node_modules/.bin", name);

// Building the document takes seconds on a loaded machine: it is built once, and each test parses its own
// copy of it (the validator dereferences the object it is given in place).
let built: string | undefined;
const document = () => JSON.parse((built ??= JSON.stringify(buildOpenApiDocument(openApiRegistrations)))) as Record<string, any>;

describe("OpenAPI document", () => {
  it("is valid OpenAPI 3.0.3 under a standard validator", async () => {
    const doc = document();
    expect(doc.openapi).toBe("3.0.3");
    await expect(SwaggerParser.validate(doc as never)).resolves.toBeDefined();
  });

  it("lints with Spectral's oas ruleset without errors", async () => {
    const spectral = new Spectral();
    spectral.setRuleset(oas as never);
    const results = await spectral.run(new Document(JSON.stringify(document(), null, 2), Parsers.Json));
    const errors = results.filter((r) => r.severity === 0).map((r) => `${r.code} at ${r.path.join(".")}: ${r.message}`);
    expect(errors).toEqual([]);
  });

  it("describes every declared route with both security schemes and the error envelope", () => {
    const doc = document();
    // Every documented route is in it, and nothing else: the document and the gateway's route table are
    // one set of declarations (each service's test/declared-routes.test.ts checks it serves them).
    const declared = apiRoutes.filter((route) => route.docs).map((route) => `${route.method} ${API_PREFIX}${route.path}`);
    const documented = Object.entries(doc.paths).flatMap(([path, item]) => Object.keys(item as object).map((method) => `${method.toUpperCase()} ${path}`));
    expect(documented.sort()).toEqual(declared.sort());
    expect(Object.keys(doc.components.securitySchemes).sort()).toEqual(["apiKeyAuth", "bearerAuth"]);
    expect(doc.components.securitySchemes.apiKeyAuth).toMatchObject({ type: "apiKey", in: "header", name: "X-Api-Key" });
    expect(doc.components.schemas.ErrorEnvelope).toBeDefined();
    expect(doc.paths["/api/v1/openapi.json"].get.security).toEqual([]);
    // Deliveries are described as a callback of webhook creation, with the signed payload's schema.
    const delivery = doc.paths["/api/v1/webhook"].post.callbacks.delivery["{$request.body#/url}"].post;
    expect(delivery.parameters.map((p: { name: string }) => p.name)).toEqual(expect.arrayContaining(["X-Service-Signature", "X-Service-Event", "X-Service-Delivery-Id"]));
    expect(doc.components.schemas.WebhookEventPayload.required).toEqual(["event", "data", "businessId", "timestamp"]);
  });

  it("names every operation with a unique operationId, by the declarations' rule, and summarises it", () => {
    const doc = document();
    const operations = Object.values(doc.paths).flatMap((item) => Object.values(item as Record<string, { operationId?: string; summary?: string }>));
    const ids = operations.map((op) => op.operationId);
    expect(ids.every((id) => typeof id === "string" && /^[a-z][A-Za-z0-9]*$/.test(id))).toBe(true);
    expect(new Set(ids).size).toBe(operations.length);
    expect(operations.filter((op) => !op.summary?.trim())).toEqual([]);
    const byPath = (method: string, p: string) => doc.paths[`${API_PREFIX}${p}`][method].operationId;
    expect([
      byPath("get", "/client"),
      byPath("get", "/client/{id}"),
      byPath("post", "/invoice/batch"),
      byPath("put", "/quote/{id}"),
      byPath("get", "/webhook"),
      byPath("get", "/webhook/{id}/deliveries"),
      byPath("post", "/webhook/{id}/rotate-secret"),
      byPath("post", "/auth/sign-up"),
      byPath("get", "/capabilities"),
    ]).toEqual(["listClients", "getClient", "createInvoiceBatch", "putQuote", "listWebhooks", "listWebhookDeliveries", "rotateWebhookSecret", "signUp", "capabilities"]);
  });

  it("shows an example of every request body that its own schema accepts, and of the error envelope", () => {
    const doc = document();
    type Schema = NonNullable<Route["body"]>["schema"];
    const schemaOf = (route: Route): Schema | undefined => route.body?.schema ?? (route.docs?.().request?.body?.content?.["application/json"]?.schema as Schema | undefined);
    const checked: string[] = [];
    for (const route of apiRoutes.filter((r) => r.docs)) {
      const operation = doc.paths[`${API_PREFIX}${route.path}`][route.method.toLowerCase()];
      const media = operation.requestBody?.content?.["application/json"];
      if (!media) continue;
      const component = media.schema.$ref ? doc.components.schemas[String(media.schema.$ref).split("/").pop()!] : media.schema;
      const example = media.example ?? component.example;
      const name = `${route.method} ${route.path}`;
      expect([name, example === undefined ? "no example" : "example"]).toEqual([name, "example"]);
      const parsed = schemaOf(route)!.safeParse(example);
      expect([name, parsed.success ? "accepted" : parsed.error.message]).toEqual([name, "accepted"]);
      checked.push(name);
    }
    expect(checked.length).toBeGreaterThanOrEqual(40);
    expect(errorEnvelopeSchema.safeParse(doc.components.schemas.ErrorEnvelope.example).success).toBe(true);
  });

  describe("with other tools", () => {
    let dir: string;
    let file: string;
    beforeAll(() => {
      dir = mkdtempSync(path.join(os.tmpdir(), "crm-openapi-"));
      file = path.join(dir, "openapi.json");
      writeFileSync(file, JSON.stringify(document(), null, 1));
    });
    afterAll(() => rmSync(dir, { recursive: true, force: true }));

    // No telemetry, no update check: the lint reads the file and nothing else.
    const quietEnv = { ...process.env, REDOCLY_TELEMETRY: "off", REDOCLY_SUPPRESS_UPDATE_NOTICE: "true", NO_COLOR: "1" };

    it("lints clean under Redocly's recommended ruleset (redocly.yaml)", async () => {
      const { stdout } = await run(bin("redocly"), ["lint", "--config", path.join(GATEWAY, "redocly.yaml"), "--format", "json", file], {
        env: quietEnv,
        maxBuffer: 64 * 1024 * 1024,
      }).catch((err: { stdout?: string }) => ({ stdout: err.stdout ?? "" }));
      const report = JSON.parse(stdout) as { totals: Record<string, number>; problems: Array<{ ruleId: string; message: string; location: Array<{ pointer: string }> }> };
      expect(report.problems.map((p) => `${p.ruleId} at ${p.location[0]?.pointer}: ${p.message}`)).toEqual([]);
      expect(report.totals).toMatchObject({ errors: 0, warnings: 0 });
    });

    it("drives a second generator: @hey-api/openapi-ts writes an SDK that type-checks and is used as documented", async () => {
      const out = path.join(dir, "sdk");
      await run(bin("openapi-ts"), ["-i", file, "-o", out], { env: quietEnv });
      writeFileSync(
        path.join(dir, "use.ts"),
        [
          'import { createClient } from "./sdk/client";',
          'import { createInvoiceBatch, listClients, rotateWebhookSecret } from "./sdk";',
          'const client = createClient({ baseUrl: "http://localhost:3000" });',
          "export async function sync(): Promise<number> {",
          '  const page = await listClients({ client, query: { perPage: 50, where: "isActive:true", orderBy: "lastName:asc" } });',
          "  // @ts-expect-error perPage is a number",
          '  await listClients({ client, query: { perPage: "50" } });',
          '  const batch = await createInvoiceBatch({ client, body: { items: [{ clientId: "c", items: [{ description: "Work", quantity: 1, unitPrice: 10 }] }] } });',
          '  await rotateWebhookSecret({ client, path: { id: "w" }, body: { gracePeriodSeconds: 3600 } });',
          "  return (page.data?.data.length ?? 0) + (batch.data?.data[0]?.totalAmount ?? 0);",
          "}",
        ].join("\n"),
      );
      writeFileSync(
        path.join(dir, "tsconfig.json"),
        JSON.stringify({
          compilerOptions: { strict: true, noEmit: true, target: "es2022", module: "esnext", moduleResolution: "bundler", lib: ["es2022", "dom", "dom.iterable"], types: [] },
          include: ["sdk/**/*.ts", "use.ts"],
        }),
      );
      const typeCheck = await run(process.execPath, [require.resolve("typescript/bin/tsc"), "-p", dir], { env: quietEnv }).catch((err: { stdout?: string }) => err);
      expect("stdout" in typeCheck ? typeCheck.stdout : "").toBe("");
    });
  });
});
