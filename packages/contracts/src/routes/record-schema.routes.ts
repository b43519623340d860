// GET /api/v1/{entity}/schema (extensions §E4): the JSON Schema of an entity's record as the caller's
// business sees it, its custom fields included. Served by crm-records; listed before the records'
// routes (routes/index.ts), so `/{entity}/schema` never reads as a record id.
import { dataEnvelope } from "../envelope";
import type { RecordEntity } from "../events";
import { jsonContent } from "../openapi-responses";
import { permission } from "../permissions";
import { recordContracts, recordResourceOf } from "../records";
import { z } from "../zod";
import { defineRoute } from "./route";

/** The answer's `data`: a JSON Schema document; its shape is the JSON Schema meta-schema's business. */
export const recordJsonSchemaSchema = z
  .object({ $schema: z.literal("https://json-schema.org/draft/2020-12/schema") })
  .passthrough()
  .openapi("RecordJsonSchema", { description: "A JSON Schema (draft 2020-12) document" });

function entitySchemaRoutes<E extends RecordEntity>(entity: E) {
  const resource = recordResourceOf[entity];
  return {
    getSchema: defineRoute({
      service: "crm-records",
      method: "GET",
      path: `/${entity}/schema`,
      permission: permission(resource, "read"),
      errors: [],
      docs: () => ({
        tags: ["Custom fields"],
        summary: `The JSON Schema of a ${entity} record as this business sees it, its custom fields included (permission ${resource}.read)`,
        description:
          `A JSON Schema (draft 2020-12) every ${entity} this API returns (GET, lists, create and update answers, event data) validates against: ` +
          "the built-in fields with their types and nullability, relations as include returns them, and customFields with one member per active " +
          "definition of this business (type, limits, options; null when the record holds no value). Answers narrowed with fields= hold a subset of it. " +
          "It changes when a definition does; archived definitions are left out.",
        responses: { 200: { description: "The schema", ...jsonContent(dataEnvelope(recordJsonSchemaSchema)) } },
      }),
    }),
  };
}

export type RecordSchemaRoutes = ReturnType<typeof entitySchemaRoutes>;

/** Per entity, its schema route. */
export const recordSchemaRoutes = Object.fromEntries(Object.keys(recordContracts).map((entity) => [entity, entitySchemaRoutes(entity as RecordEntity)])) as Readonly<
  Record<RecordEntity, RecordSchemaRoutes>
>;
