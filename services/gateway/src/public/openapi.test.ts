import SwaggerParser from "@apidevtools/swagger-parser";
import { Spectral, Document } from "@stoplight/spectral-core";
import * as Parsers from "@stoplight/spectral-parsers";
import { oas } from "@stoplight/spectral-rulesets";
import { API_PREFIX, apiRoutes } from "@crm/contracts";
import { buildOpenApiDocument } from "./openapi";
import { openApiRegistrations } from "./registrations";

jest.setTimeout(60_000);

const document = () => JSON.parse(JSON.stringify(buildOpenApiDocument(openApiRegistrations))) as Record<string, any>;

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
});
