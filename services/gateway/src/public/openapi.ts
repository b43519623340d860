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
    withTypedNullables(
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
    ),
  );
}

type JsonSchema = Record<string, unknown>;
const isObject = (value: unknown): value is JsonSchema => typeof value === "object" && value !== null && !Array.isArray(value);
/** Keys that say nothing about a value's type. */
const ANNOTATIONS = new Set(["nullable", "description", "example", "title", "deprecated"]);
const onlyAnnotations = (schema: JsonSchema) => Object.keys(schema).every((key) => ANNOTATIONS.has(key));

/**
 * OpenAPI 3.0 allows `nullable` only beside a `type`, and generators read it so (Redocly's
 * nullable-type-sibling). zod-to-openapi writes two shapes without one: `z.unknown()` as
 * `{nullable: true}`, which becomes `{}` (any JSON value, null included), and a nullable reference
 * as `allOf: [{$ref}, {nullable: true}]`, which becomes `anyOf: [{$ref}, {type, nullable: true,
 * enum: [null]}]`: 3.0.3's own way to say "this schema or null" (a `nullable` beside `allOf` would
 * not admit null, since the referenced schema refuses it), read by generators as `T | null`.
 */
// biome-ignore lint/suspicious/noExplicitAny: the generated document is untyped JSON here.
function withTypedNullables<T extends { components?: { schemas?: Record<string, any> } }>(doc: T): T {
  const schemas = doc.components?.schemas ?? {};
  const typeOfRef = (ref: unknown) => (typeof ref === "string" ? schemas[ref.replace("#/components/schemas/", "")]?.type : undefined);
  const visit = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(visit);
    if (!isObject(node)) return node;
    // A nullable reference first, before its parts are visited (its marker alone reads as "any").
    if (Array.isArray(node.allOf) && node.type === undefined) {
      const parts = node.allOf as unknown[];
      const marker = parts.find((part): part is JsonSchema => isObject(part) && part.nullable === true && part.type === undefined && onlyAnnotations(part));
      const ref = parts.find((part): part is JsonSchema => isObject(part) && typeof part.$ref === "string");
      const type = ref ? typeOfRef(ref.$ref) : undefined;
      if (marker && ref && type && parts.length === 2) {
        const { nullable: _null, ...annotations } = marker;
        const { allOf: _parts, ...rest } = node;
        return visit({ ...rest, ...annotations, anyOf: [ref, { type, nullable: true, enum: [null] }] });
      }
    }
    const out: JsonSchema = {};
    for (const [key, value] of Object.entries(node)) out[key] = visit(value);
    if (out.nullable === true && out.type === undefined && onlyAnnotations(out)) {
      const { nullable: _any, ...annotations } = out;
      return annotations;
    }
    return out;
  };
  return visit(doc) as T;
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
        add(
          "409",
          "Idempotency-Key reused with a different request or by another user or API key, what was kept of its first request cannot be read, or its first request may have completed but its outcome could not be told (409002)",
        );
    }
  }
  return doc;
}
