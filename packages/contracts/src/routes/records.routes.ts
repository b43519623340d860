// The crm-records service's routes: seven per entity, the same for every entity (interface §2, §4;
// decisions §2, §3; extensions §E2.2, §E2.3).
import type { ErrorCode } from "@crm/errors";
import { dataEnvelope, paginationQuerySchema, recordListEnvelope } from "../envelope";
import type { RecordEntity } from "../events";
import { jsonContent } from "../openapi-responses";
import { permission } from "../permissions";
import { deletedModes, RECORD_BATCH_MAX_ITEMS, recordBodyExamples } from "../record-requests";
import { recordContracts, recordResourceOf, type RecordContract } from "../records";
import { z } from "../zod";
import { defineRoute, type Route } from "./route";

const idParams = z.object({ id: z.string().openapi({ param: { name: "id", in: "path" }, description: "Record id (UUID); anything else is 404001" }) });
const param = (name: string, description: string, example?: string) =>
  z
    .string()
    .optional()
    .openapi({ param: { name, in: "query" }, description, ...(example ? { example } : {}) });
const includeParam = (relations: RecordContract["relations"]) => {
  const names = Object.entries(relations).map(([name, relation]) => (relation.default ? `${name} (default)` : name));
  return param(
    "include",
    `Comma-separated relations to embed: ${names.length > 0 ? names.join(", ") : "none"}; "-name" removes a default relation. Unknown relation: 400019. ` +
      "A relation needs {resource}.read of the records it holds (extensions §E10): one named without it is 401014; a default one is left out.",
  );
};
const fieldsParam = param(
  "fields",
  "Comma-separated fields to answer with (extensions §E8), plus id always: the record's own fields, customFields.<key> for an active custom field, and relation.field for a relation the answer includes " +
    "(its records keep their id too). At most 100 names and 2,000 characters; an empty list, an unknown name or a relation not included: 400019. " +
    "A relation needs {resource}.read (401014). The ETag is the whole record's, whatever fields selects.",
  "id,firstName,lastName",
);
/**
 * What a list of records takes; any other parameter is refused (400001 naming it): a misspelt
 * `perpage` or a `limit` from another API would otherwise be ignored without a word. `cursor` is
 * extensions §E2.1's.
 */
export const RECORD_LIST_PARAMETERS = ["page", "perPage", "where", "orderBy", "include", "fields", "cursor", "deleted"] as const;
/** What reading one record takes. */
export const RECORD_GET_PARAMETERS = ["include", "fields", "deleted"] as const;

const deletedParam = (one: boolean) =>
  z
    .enum(deletedModes)
    .optional()
    .openapi({
      param: { name: "deleted", in: "query" },
      description: one
        ? "include: also read the record when it is in the trash (deletedAt set); only: read it only when it is; exclude (the default): a trashed record is 404001. Any other value: 400001."
        : "Which records to list: exclude (the default) live ones, only the trash, include both; works with every other parameter. " +
          "A cursor continues in the mode it was made in (a different deleted beside it: 400001). Any other value: 400001.",
    });

const listQuery = (relations: RecordContract["relations"]) =>
  paginationQuerySchema.extend({
    where: param(
      "where",
      "Filter: field:value or field:op:value (op gt, gte, lt, lte, contains, startsWith, endsWith); casts int(), float(), bool(), date(); " +
        "comma = AND; OR:[c1,c2]; NOT:cond; quote values containing , [ ] with double quotes. customFields.<key> names an active custom field, typed by its " +
        "definition (on a multiSelect, eq means holds this option). Malformed, or an unknown or archived field: 400019.",
      "isActive:true,createdAt:gte:date(2025-01-01)",
    ),
    orderBy: param(
      "orderBy",
      "Comma-separated field:asc|desc pairs, customFields.<key> included (not a multiSelect); default createdAt:desc; id is the final tie-breaker. " +
        "Invalid, or an unknown or archived field: 400011.",
      "createdAt:desc",
    ),
    include: includeParam(relations),
    fields: fieldsParam,
    cursor: param(
      "cursor",
      "meta.nextCursor of an earlier page: the next page of the same query (its where and orderBy ride in the cursor), by keyset, so every page costs the same " +
        "and a walk visits each record that exists throughout it exactly once. Beside it only perPage, include and fields may be sent (page, where or orderBy: 400001); " +
        "a cursor this API did not make, or made for another business or entity: 400019. In cursor mode meta is {perPage, nextCursor}. " +
        "A cursor after a text sort value too long to carry (over 1,000 bytes) names it, and the product keeps it 7 days after the last cursor made with it: such a cursor sent later: 410000 (start the walk again).",
    ),
    deleted: deletedParam(false),
  });

const permanentParam = z
  .enum(["true", "false"])
  .optional()
  .openapi({
    param: { name: "permanent", in: "query" },
    description: "true: purge a record that is in the trash, for good (a live record: 409007); false (the default): move the record to the trash",
  });

/** Extensions §E2.3: the record's entity tag, on every single-record answer. */
const etagHeader = {
  ETag: {
    description:
      "Strong entity tag of the record's own state (its fields; for invoices and quotes, its items), changing whenever the record changes. Relations embedded by include are not part of it.",
    schema: { type: "string" as const, example: '"3q2-7wEhZx0dYgkX2sL9aQ"' },
  },
};
const ifNoneMatchHeader = z.object({
  "If-None-Match": z
    .string()
    .optional()
    .openapi({
      param: { name: "If-None-Match", in: "header" },
      description: "ETag(s) you hold (weak comparison) or *: when one is current, 304 with no body",
      example: '"3q2-7wEhZx0dYgkX2sL9aQ"',
    }),
});
const ifMatchHeader = z.object({
  "If-Match": z
    .string()
    .optional()
    .openapi({
      param: { name: "If-Match", in: "header" },
      description:
        "Write only if the record's current ETag is one of these (strong comparison; * = any existing record); otherwise 412000, nothing changes and no event is emitted",
      example: '"3q2-7wEhZx0dYgkX2sL9aQ"',
    }),
});

const titles: Record<RecordEntity, string> = {
  client: "client",
  contact: "contact",
  invoice: "invoice",
  quote: "quote",
  product: "product",
  service: "service",
  employee: "employee",
};

/** The routes of one entity, in the order the document lists them. */
function entityRoutes<E extends RecordEntity>(entity: E) {
  const contract = recordContracts[entity];
  const resource = recordResourceOf[entity];
  const name = titles[entity];
  const tags = [`${name[0]!.toUpperCase()}${name.slice(1)}s`];
  const base = { service: "crm-records" as const };
  const one = () => dataEnvelope(contract.view);
  const writeErrors: ErrorCode[] = [400001, 400002, 413000, 415000];
  const clientReference = (contract as RecordContract).clientReference;
  const writeNote = clientReference ? ` An unknown ${clientReference} or one of another business: 400001 with details[0].path ${clientReference}.` : "";
  const update: Omit<Route, "method"> = {
    ...base,
    path: `/${entity}/{id}`,
    permission: permission(resource, "update"),
    errors: [...writeErrors, 404001, 412000],
    docs: () => ({
      tags,
      summary: `Update any subset of a ${name}'s writable fields (permission ${resource}.update); emits ${entity}.updated`,
      description: `PATCH and PUT are both partial updates.${writeNote}`,
      request: { params: idParams, headers: ifMatchHeader, body: { required: true, ...jsonContent(contract.update) } },
      responses: { 200: { description: "The updated record (without relations), with its new ETag", headers: etagHeader, ...jsonContent(one()) } },
    }),
  };

  return {
    list: defineRoute({
      ...base,
      method: "GET",
      path: `/${entity}`,
      permission: permission(resource, "read"),
      query: RECORD_LIST_PARAMETERS,
      errors: [400001, 400011, 400019, 410000],
      docs: () => ({
        tags,
        summary: `List ${name}s of the caller's business (permission ${resource}.read)`,
        description:
          "An answer larger than the gateway relays (UPSTREAM_MAX_RESPONSE_BYTES, 32 MiB by default) is 500000 rather than a partial page: " +
          "ask for a smaller perPage or fewer relations.",
        request: { query: listQuery(contract.relations) },
        responses: { 200: { description: "A page of records with pagination meta", ...jsonContent(recordListEnvelope(contract.view)) } },
      }),
    }),
    get: defineRoute({
      ...base,
      method: "GET",
      path: `/${entity}/{id}`,
      permission: permission(resource, "read"),
      query: RECORD_GET_PARAMETERS,
      errors: [400001, 400019, 404001],
      docs: () => ({
        tags,
        summary: `Get one ${name} (permission ${resource}.read)`,
        request: { params: idParams, query: z.object({ include: includeParam(contract.relations), fields: fieldsParam, deleted: deletedParam(true) }), headers: ifNoneMatchHeader },
        responses: {
          200: { description: "The record", headers: etagHeader, ...jsonContent(one()) },
          304: { description: "Not modified: If-None-Match named the current ETag; no body", headers: etagHeader },
        },
      }),
    }),
    create: defineRoute({
      ...base,
      method: "POST",
      path: `/${entity}`,
      permission: permission(resource, "create"),
      errors: writeErrors,
      keyClaimedByService: true,
      docs: () => ({
        tags,
        summary: `Create a ${name} (permission ${resource}.create); emits ${entity}.created`,
        description: `Unknown and read-only fields (id, businessId, number, totalAmount, createdAt, updatedAt) are rejected with 400001.${writeNote}`,
        request: { body: { required: true, ...jsonContent(contract.create) } },
        responses: { 201: { description: "The created record (without relations)", headers: etagHeader, ...jsonContent(dataEnvelope(contract.view)) } },
      }),
    }),
    createBatch: defineRoute({
      ...base,
      method: "POST",
      path: `/${entity}/batch`,
      permission: permission(resource, "create"),
      errors: writeErrors,
      keyClaimedByService: true,
      docs: () => ({
        tags,
        summary: `Create 1 to ${RECORD_BATCH_MAX_ITEMS} ${name}s at once, all or nothing (permission ${resource}.create); emits one ${entity}.created per record, in order`,
        description:
          `Each item is a ${name} create body, validated as POST /api/v1/${entity} validates it. Any invalid item (or unknown client) is 400001 with details naming it ` +
          "(items.3.firstName, items.0.clientId) and nothing is created. The answer lists the records in the order of the items. Idempotency-Key works as on any POST. " +
          "The whole request is at most 1 MiB (413000).",
        request: {
          body: {
            required: true,
            ...jsonContent(
              z
                .object({ items: z.array(contract.create).min(1).max(RECORD_BATCH_MAX_ITEMS) })
                .strict()
                .openapi(`${tags[0]!.slice(0, -1)}BatchCreate`, { example: { items: [recordBodyExamples[entity].create] } }),
            ),
          },
        },
        responses: { 201: { description: "The created records (without relations), in the order of the items", ...jsonContent(dataEnvelope(z.array(contract.view))) } },
      }),
    }),
    patch: defineRoute({ ...update, method: "PATCH" }),
    put: defineRoute({ ...update, method: "PUT" }),
    delete: defineRoute({
      ...base,
      method: "DELETE",
      path: `/${entity}/{id}`,
      permission: permission(resource, "delete"),
      // Only `permanent`: a misspelt or bracketed one (`permanant=true`, `permanent[]=true`) would otherwise trash what was to be purged.
      query: ["permanent"],
      errors: entity === "client" ? [400001, 404001, 409003, 409007, 412000] : [400001, 404001, 409007, 412000],
      docs: () => ({
        tags,
        summary: `Delete a ${name}: move it to the trash (permission ${resource}.delete); emits ${entity}.deleted`,
        description:
          (entity === "client" ? "Moves the client's contacts to the trash too (each emits contact.deleted). A client with invoices or quotes: 409003. " : "") +
          `The record is kept in the trash for TRASH_RETENTION_DAYS (30 by default): list it with deleted=only, bring it back with POST /api/v1/${entity}/{id}/restore. ` +
          "With permanent=true a trashed record is purged at once (200 with the record, no event); a live one is 409007." +
          (entity === "client" ? " Purging a client purges its trashed contacts with it; while a trashed invoice or quote still names it: 409003." : ""),
        request: { params: idParams, query: z.object({ permanent: permanentParam }), headers: ifMatchHeader },
        responses: {
          200: {
            description: "The record as it was (without relations), with the ETag it had; with permanent=true, the purged record as the trash held it",
            headers: etagHeader,
            ...jsonContent(one()),
          },
        },
      }),
    }),
    restore: defineRoute({
      ...base,
      method: "POST",
      path: `/${entity}/{id}/restore`,
      permission: permission(resource, "delete"),
      errors: clientReference ? [404001, 409007, 409008] : [404001, 409007],
      docs: () => ({
        tags,
        summary: `Restore a ${name} from the trash (permission ${resource}.delete); emits ${entity}.restored`,
        description:
          "A record that is not in the trash: 409007. Purged or unknown: 404001. " +
          (entity === "client"
            ? "The contacts the client's delete moved to the trash come back with it (each emits contact.restored); contacts deleted before it stay in the trash."
            : clientReference
              ? "While its client is in the trash: 409008 (restore the client first)."
              : ""),
        request: { params: idParams },
        responses: { 200: { description: "The live record (without relations), with its ETag", headers: etagHeader, ...jsonContent(one()) } },
      }),
    }),
  };
}

export type RecordRoutes = ReturnType<typeof entityRoutes>;

/** Per entity, its routes: what crm-records mounts for each entity definition. */
export const recordRoutes = Object.fromEntries(Object.keys(recordContracts).map((entity) => [entity, entityRoutes(entity as RecordEntity)])) as Readonly<
  Record<RecordEntity, RecordRoutes>
>;
