import { OpenApiGeneratorV3, OpenAPIRegistry } from "@asteasolutions/zod-to-openapi";
import { registerWebhooksOpenApi } from "@crm/contracts";
import { ConfigError } from "@crm/config";
import { loadConfig } from "../src";

describe("loadConfig", () => {
  it("has the production defaults of decisions §1", () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      PORT: 4003,
      WEBHOOK_TIMEOUT_MS: 10_000,
      WEBHOOK_RETRY_DELAYS_MS: [60_000, 300_000],
      WEBHOOK_RETRY_INTERVAL_MS: 30_000,
      WEBHOOK_RETRY_BATCH_SIZE: 10,
      WEBHOOK_ALLOW_PRIVATE_TARGETS: false,
      KAFKA_FETCH_MAX_WAIT_MS: 100,
      KAFKA_SESSION_TIMEOUT_MS: 6_000,
      KAFKA_HEARTBEAT_INTERVAL_MS: 1_000,
    });
    expect(Object.isFrozen(config)).toBe(true);
  });

  it("reads the WEBHOOK_* variables", () => {
    const config = loadConfig({
      WEBHOOK_TIMEOUT_MS: "500",
      WEBHOOK_RETRY_DELAYS_MS: "200, 400",
      WEBHOOK_RETRY_INTERVAL_MS: "100",
      WEBHOOK_RETRY_BATCH_SIZE: "3",
      WEBHOOK_ALLOW_PRIVATE_TARGETS: "true",
    });
    expect(config).toMatchObject({
      WEBHOOK_TIMEOUT_MS: 500,
      WEBHOOK_RETRY_DELAYS_MS: [200, 400],
      WEBHOOK_RETRY_INTERVAL_MS: 100,
      WEBHOOK_RETRY_BATCH_SIZE: 3,
      WEBHOOK_ALLOW_PRIVATE_TARGETS: true,
    });
  });

  it.each([
    ["WEBHOOK_TIMEOUT_MS", "soon"],
    ["WEBHOOK_RETRY_DELAYS_MS", "60s,5m"],
    ["WEBHOOK_RETRY_BATCH_SIZE", "0"],
    ["WEBHOOK_ALLOW_PRIVATE_TARGETS", "maybe"],
    ["KAFKA_FETCH_MAX_WAIT_MS", "0"],
    ["PORT", "70000"],
  ])("refuses %s=%s with one line naming the variable", (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ [name]: value })).toThrow(new RegExp(`^Invalid configuration: ${name}: `));
  });
});

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
