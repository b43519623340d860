// Custom field definitions (extensions §E4): five routes per entity, served by crm-records. Reading
// needs the entity's `{resource}.read`; writing is for administrators, i.e. callers holding
// `users.update` (OWNER and ADMIN, extensions' preamble), else 401014. Listed before the records'
// routes (routes/index.ts), so `/{entity}/fields` never reads as a record id.
import { customFieldCreateSchema, customFieldDefinitionSchema, customFieldUpdateSchema } from "../custom-fields";
import { dataEnvelope } from "../envelope";
import type { RecordEntity } from "../events";
import { jsonContent } from "../openapi-responses";
import { permission } from "../permissions";
import { recordContracts, recordResourceOf } from "../records";
import { z } from "../zod";
import { defineRoute } from "./route";

/** Who may change definitions: administrators (extensions: "callers holding users.update"). */
export const CUSTOM_FIELD_ADMIN_PERMISSION = permission("users", "update");

const keyParams = z.object({ key: z.string().openapi({ param: { name: "key", in: "path" }, description: "The definition's key", example: "externalId" }) });
const permanentQuery = z.object({
  permanent: z
    .string()
    .optional()
    .openapi({
      param: { name: "permanent", in: "query" },
      description: "true: remove an archived definition and its values for good (a live one: 409007); then the key may be defined again",
      example: "true",
    }),
});

function entityFieldRoutes<E extends RecordEntity>(entity: E) {
  const resource = recordResourceOf[entity];
  const tags = ["Custom fields"];
  const base = { service: "crm-records" as const };
  const one = () => ({ description: "The definition", ...jsonContent(dataEnvelope(customFieldDefinitionSchema)) });
  const writeErrors = [400001, 400002, 413000, 415000] as const;
  return {
    listFields: defineRoute({
      ...base,
      method: "GET",
      path: `/${entity}/fields`,
      permission: permission(resource, "read"),
      errors: [],
      docs: () => ({
        tags,
        summary: `Every custom field definition of ${entity} records, archived ones included (permission ${resource}.read)`,
        responses: { 200: { description: "All definitions, oldest first (no paging: at most 100)", ...jsonContent(dataEnvelope(z.array(customFieldDefinitionSchema))) } },
      }),
    }),
    getField: defineRoute({
      ...base,
      method: "GET",
      path: `/${entity}/fields/{key}`,
      permission: permission(resource, "read"),
      errors: [404001],
      docs: () => ({
        tags,
        summary: `One custom field definition of ${entity} records (permission ${resource}.read)`,
        request: { params: keyParams },
        responses: { 200: one() },
      }),
    }),
    createField: defineRoute({
      ...base,
      method: "POST",
      path: `/${entity}/fields`,
      permission: CUSTOM_FIELD_ADMIN_PERMISSION,
      errors: [...writeErrors, 409001, 409006],
      body: { schema: customFieldCreateSchema, required: true },
      docs: () => ({
        tags,
        summary: `Define a custom field on ${entity} records (administrators: permission users.update)`,
        description:
          `A key that is a built-in field or relation of ${entity} is 400001; one already defined (archived ones included) 409001. ` +
          "At most 100 definitions per entity (archived included) and 10 unique ones: 409006 beyond. defaultValue is validated like a value.",
        responses: { 201: { description: "The definition", ...jsonContent(dataEnvelope(customFieldDefinitionSchema)) } },
      }),
    }),
    updateField: defineRoute({
      ...base,
      method: "PATCH",
      path: `/${entity}/fields/{key}`,
      permission: CUSTOM_FIELD_ADMIN_PERMISSION,
      errors: [...writeErrors, 404001],
      body: { schema: customFieldUpdateSchema, required: true },
      docs: () => ({
        tags,
        summary: `Change a custom field definition of ${entity} records (administrators: permission users.update)`,
        description:
          "key and unique never change; type only from text to longText; options can be added, not removed (400001 otherwise). " +
          '{"isArchived": false} brings an archived definition back with its values unchanged.',
        request: { params: keyParams },
        responses: { 200: one() },
      }),
    }),
    deleteField: defineRoute({
      ...base,
      method: "DELETE",
      path: `/${entity}/fields/{key}`,
      permission: CUSTOM_FIELD_ADMIN_PERMISSION,
      query: ["permanent"],
      errors: [400001, 404001, 409007],
      docs: () => ({
        tags,
        summary: `Archive a custom field definition of ${entity} records, or remove an archived one for good (administrators: permission users.update)`,
        description: "Archived: its values disappear from every answer and event but are kept. With permanent=true (archived only): the definition and its values are removed.",
        request: { params: keyParams, query: permanentQuery },
        responses: { 200: { description: "The definition as it now is (archived), or as it was (permanent)", ...jsonContent(dataEnvelope(customFieldDefinitionSchema)) } },
      }),
    }),
  };
}

export type CustomFieldRoutes = ReturnType<typeof entityFieldRoutes>;

/** Per entity, its definition routes. */
export const customFieldRoutes = Object.fromEntries(Object.keys(recordContracts).map((entity) => [entity, entityFieldRoutes(entity as RecordEntity)])) as Readonly<
  Record<RecordEntity, CustomFieldRoutes>
>;
