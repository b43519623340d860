import { OpenApiGeneratorV3, OpenAPIRegistry } from "@asteasolutions/zod-to-openapi";
import { registerWebhooksOpenApi } from "./webhooks.routes";

describe("registerWebhooksOpenApi", () => {
  it("describes every endpoint with its success and error responses", () => {
    const registry = new OpenAPIRegistry();
    registerWebhooksOpenApi(registry);
    const doc = new OpenApiGeneratorV3(registry.definitions).generateDocument({ openapi: "3.0.3", info: { title: "t", version: "1" } });
    const paths = doc.paths ?? {};
    const ops = Object.entries(paths).flatMap(([p, item]) => Object.keys(item as object).map((m) => `${m.toUpperCase()} ${p}`));
    expect(ops.sort()).toEqual(
      [
        "POST /api/v1/webhook",
        "GET /api/v1/webhook",
        "GET /api/v1/webhook/{id}",
        "PUT /api/v1/webhook/{id}",
        "DELETE /api/v1/webhook/{id}",
        "POST /api/v1/webhook/{id}/test",
        "POST /api/v1/webhook/{id}/rotate-secret",
        "GET /api/v1/webhook/{id}/deliveries",
        "POST /api/v1/webhook/{id}/deliveries/{deliveryId}/retry",
        "POST /api/v1/webhook/{id}/recover",
      ].sort(),
    );
    const retry = (paths["/api/v1/webhook/{id}/deliveries/{deliveryId}/retry"] as { post: { responses: Record<string, { description: string }> } }).post;
    expect(Object.keys(retry.responses)).toEqual(expect.arrayContaining(["202", "404", "409", "401"]));
    expect(retry.responses["409"]!.description).toContain("409004 Delivery is not in a retryable state");
    const create = (paths["/api/v1/webhook"] as { post: { responses: Record<string, unknown> } }).post;
    expect(Object.keys(create.responses)).toEqual(expect.arrayContaining(["201", "400"]));
  });
});
