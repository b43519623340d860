import SwaggerParser from "@apidevtools/swagger-parser";
import { Spectral, Document } from "@stoplight/spectral-core";
import * as Parsers from "@stoplight/spectral-parsers";
import { oas } from "@stoplight/spectral-rulesets";
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

  it("describes every endpoint of the contract with both security schemes and the error envelope", () => {
    const doc = document();
    const paths = Object.keys(doc.paths);
    for (const path of [
      "/api/v1/auth/sign-up",
      "/api/v1/auth/sign-in",
      "/api/v1/auth/token/refresh",
      "/api/v1/auth/logout",
      "/api/v1/auth/me",
      "/api/v1/api-key",
      "/api/v1/api-key/{id}",
      "/api/v1/user",
      "/api/v1/user/{id}",
      "/api/v1/client",
      "/api/v1/client/{id}",
      "/api/v1/invoice",
      "/api/v1/contact",
      "/api/v1/quote",
      "/api/v1/product",
      "/api/v1/service",
      "/api/v1/employee",
      "/api/v1/webhook",
      "/api/v1/webhook/{id}",
      "/api/v1/webhook/{id}/test",
      "/api/v1/webhook/{id}/deliveries",
      "/api/v1/webhook/{id}/rotate-secret",
      "/api/v1/webhook/{id}/deliveries/{deliveryId}/retry",
      "/api/v1/webhook/{id}/recover",
      "/api/v1/openapi.json",
      "/api/v1/capabilities",
    ]) {
      expect(paths).toContain(path);
    }
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
