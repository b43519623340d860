// Checks that a response the product actually sent is described by its own OpenAPI document:
// the operation exists, the status is documented, and a JSON body matches the documented schema.
// The end-to-end tests run every response through this, so the document cannot drift from behaviour.
import { openapiSchemaToJsonSchema } from "@openapi-contrib/openapi-schema-to-json-schema";
import Ajv, { type ValidateFunction } from "ajv";
import addFormats from "ajv-formats";

type Json = Record<string, any>;

/** Points refs at the shared components schema, and turns draft-04 boolean exclusive bounds into draft-07 numbers. */
function normalise(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(normalise);
  if (node && typeof node === "object") {
    const out: Json = {};
    for (const [k, v] of Object.entries(node)) {
      if (k === "$schema") continue;
      out[k] = k === "$ref" && typeof v === "string" ? v.replace("#/components/schemas/", "openapi-components#/definitions/") : normalise(v);
    }
    for (const [flag, bound] of [
      ["exclusiveMinimum", "minimum"],
      ["exclusiveMaximum", "maximum"],
    ] as const) {
      if (typeof out[flag] === "boolean") {
        if (out[flag] && typeof out[bound] === "number") {
          out[flag] = out[bound];
          delete out[bound];
        } else delete out[flag];
      }
    }
    return out;
  }
  return node;
}

function toJsonSchema(schema: Json): Json {
  return normalise(openapiSchemaToJsonSchema(schema as never, { cloneSchema: true, supportPatternProperties: true } as never)) as Json;
}

export class OpenApiResponseValidator {
  private readonly ajv: Ajv;
  private readonly operations: Array<{ method: string; pattern: RegExp; template: string; op: Json }> = [];
  private readonly compiled = new Map<string, ValidateFunction>();

  constructor(doc: Json) {
    this.ajv = new Ajv({ strict: false, allErrors: true });
    addFormats(this.ajv);
    const definitions: Json = {};
    for (const [name, schema] of Object.entries(doc.components?.schemas ?? {})) definitions[name] = toJsonSchema(schema as Json);
    this.ajv.addSchema({ $id: "openapi-components", definitions });
    for (const [template, item] of Object.entries(doc.paths as Json)) {
      const pattern = new RegExp(`^${template.replace(/\{[^}]+\}/g, "[^/]+")}$`);
      for (const [method, op] of Object.entries(item as Json)) {
        if (["get", "post", "put", "patch", "delete"].includes(method)) this.operations.push({ method: method.toUpperCase(), pattern, template, op: op as Json });
      }
    }
    // Literal paths before templated ones (`/api-key` vs `/api-key/{id}` never collide, but be exact).
    this.operations.sort((a, b) => a.template.split("{").length - b.template.split("{").length);
  }

  /** Returns a list of problems; empty when the response is described by the document. */
  check(method: string, path: string, status: number, body: unknown, contentType: string | null): string[] {
    const bare = path.split("?")[0]!;
    const operation = this.operations.find((o) => o.method === method && o.pattern.test(bare));
    if (!operation) {
      // An unknown route cannot be in the document; its answer is the catalogue's 404000.
      const code = (body as { error?: { code?: number } } | undefined)?.error?.code;
      return status === 404 && code === 404000 ? [] : [`${method} ${bare}: no such operation in the OpenAPI document`];
    }
    const response = operation.op.responses?.[String(status)] ?? operation.op.responses?.default;
    const where = `${method} ${operation.template} -> ${status}`;
    if (!response) return [`${where}: status not documented`];
    const media = response.content?.["application/json"];
    if (!media) return body === undefined || body === "" ? [] : contentType?.includes("json") ? [`${where}: JSON body not documented`] : [];
    if (!media.schema) return [];
    const key = `${where}`;
    let validate = this.compiled.get(key);
    if (!validate) {
      validate = this.ajv.compile(toJsonSchema(media.schema));
      this.compiled.set(key, validate);
    }
    if (validate(body)) return [];
    return (validate.errors ?? []).slice(0, 5).map((e) => `${where}: body${e.instancePath} ${e.message}`);
  }
}
