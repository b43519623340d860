// The OpenAPI 3.0.3 document, generated from the zod schemas that validate requests (each context
// declares its own routes in @crm/contracts, the gateway's documents included); built once at start.
import { OpenAPIRegistry, OpenApiGeneratorV3 } from "@asteasolutions/zod-to-openapi";
import { errorEnvelopeSchema } from "@crm/contracts";

export function buildOpenApiDocument(registrations: Array<(registry: OpenAPIRegistry) => void>, serverUrl = "/"): object {
  const registry = new OpenAPIRegistry();
  registry.registerComponent("securitySchemes", "bearerAuth", {
    type: "http",
    scheme: "bearer",
    bearerFormat: "JWT",
    description: "Access token from sign-in, or an API key (`svc_...`) as a bearer token.",
  });
  registry.registerComponent("securitySchemes", "apiKeyAuth", { type: "apiKey", in: "header", name: "X-Api-Key" });
  registry.register("ErrorEnvelope", errorEnvelopeSchema);

  for (const register of registrations) register(registry);

  const generator = new OpenApiGeneratorV3(registry.definitions);
  return withEdgeResponses(
    generator.generateDocument({
      openapi: "3.0.3",
      info: {
        title: "CRM Platform API",
        version: "1.0.0",
        description:
          "Multi-tenant CRM API. Every response uses the envelope `{success, data}` / `{success, data, meta}` / `{success:false, error:{code, message, details?}}`; " +
          "logout answers 204 with no body. Every response carries X-Request-Id and X-RateLimit-* headers.",
      },
      servers: [{ url: serverUrl }],
      security: [{ bearerAuth: [] }, { apiKeyAuth: [] }],
    }),
  );
}

const errorResponse = (description: string) => ({ description, content: { "application/json": { schema: { $ref: "#/components/schemas/ErrorEnvelope" } } } });

/**
 * Answers the gateway itself can give on any operation, whatever the service behind it documents:
 * rate limit and unavailable upstream everywhere; body errors where there is a body; idempotency
 * conflicts on POST. Added where the operation does not already describe that status.
 */
// biome-ignore lint/suspicious/noExplicitAny: the generated document's operations are untyped JSON here.
function withEdgeResponses<T extends { paths?: Record<string, Record<string, any>> }>(doc: T): T {
  for (const item of Object.values(doc.paths ?? {})) {
    for (const [method, operation] of Object.entries(item)) {
      if (!["get", "post", "put", "patch", "delete"].includes(method)) continue;
      const responses: Record<string, unknown> = (operation.responses ??= {});
      const add = (status: string, description: string) => {
        responses[status] ??= errorResponse(description);
      };
      add("429", "Too many requests (429000); `Retry-After` says when to try again");
      add("503", "A service behind the gateway is unavailable (503000)");
      if (operation.requestBody) {
        add("400", "Validation failed (400001) or malformed JSON (400002)");
        add("413", "Request body larger than 1 MiB (413000)");
        add("415", "Request body is not JSON (415000)");
      }
      if (method === "post")
        add("409", "Idempotency-Key reused with a different request or by another user or API key, or what was kept of its first request cannot be read (409002)");
    }
  }
  return doc;
}
