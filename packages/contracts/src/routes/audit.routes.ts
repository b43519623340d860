// The audit log's two read routes (extensions §E7). No route writes, changes or deletes an entry.
// The business's log is answered by the gateway, which merges the entries each owning service keeps
// in its own database (docs/api.md, "Audit log: where entries live"); a record's history is
// crm-records' own.
import { AUDIT_PER_PAGE_DEFAULT, AUDIT_PER_PAGE_MAX, auditEntrySchema, auditListMetaSchema } from "../audit";
import { dataEnvelope } from "../envelope";
import type { RecordEntity } from "../events";
import { jsonContent } from "../openapi-responses";
import { permission } from "../permissions";
import { recordContracts, recordResourceOf } from "../records";
import { z } from "../zod";
import { defineRoute } from "./route";

const tags = ["Audit log"];
const query = (name: string, description: string, example?: string) =>
  z
    .string()
    .optional()
    .openapi({ param: { name, in: "query" }, description, ...(example ? { example } : {}) });

const pagingQuery = {
  perPage: query("perPage", `1-${AUDIT_PER_PAGE_MAX}, default ${AUDIT_PER_PAGE_DEFAULT}; anything else is 400001`),
  cursor: query(
    "cursor",
    "meta.nextCursor of an earlier page: the next page of the same query (its filters ride in the cursor; sending them again is allowed when they are the same, " +
      "different ones are 400001). A cursor this API did not make, or made for another business or query: 400019.",
  ),
};

/** The filters `GET /audit-log` takes; each one narrows the answer (AND). */
export const AUDIT_LOG_FILTERS = ["action", "actorId", "targetType", "targetId", "since", "until"] as const;
export const AUDIT_LOG_PARAMETERS = [...AUDIT_LOG_FILTERS, "perPage", "cursor"] as const;
export const AUDIT_HISTORY_PARAMETERS = ["perPage", "cursor"] as const;

const listEnvelope = () => dataEnvelope(z.array(auditEntrySchema)).extend({ meta: auditListMetaSchema });

export const auditRoutes = {
  listAuditLog: defineRoute({
    method: "GET",
    path: "/audit-log",
    service: "gateway",
    // Extensions §E7: administrators only, i.e. callers holding users.update (OWNER, ADMIN).
    permission: "users.update",
    query: AUDIT_LOG_PARAMETERS,
    errors: [400001, 400019, 503000],
    docs: () => ({
      tags,
      summary: "The business's audit log, newest first (administrators: permission users.update)",
      description:
        "One entry per change made through the API (records, custom field definitions, users, API keys, webhooks) and per sign-in, failed sign-in, sign-out and refresh-token reuse, " +
        "written in the change's own transaction. Ordered by occurredAt then id, both descending. Entries are kept AUDIT_RETENTION_DAYS (default 365).",
      request: {
        query: z.object({
          action: query("action", "An action name, or a group as `prefix.*` (client.*, auth.*); unknown: 400001", "client.*"),
          actorId: query("actorId", "The acting user's or API key's id"),
          targetType: query("targetType", "client, contact, ..., user, apiKey, webhook, field", "client"),
          targetId: query("targetId", "The changed object's id; a custom field definition's is `<entity>.<key>`"),
          since: query("since", "ISO 8601 date-time: entries at or after it; not a date-time: 400001", "2026-01-01T00:00:00Z"),
          until: query("until", "ISO 8601 date-time: entries before it; not a date-time, or not after since: 400001"),
          ...pagingQuery,
        }),
      },
      responses: { 200: { description: "A page of entries, newest first", ...jsonContent(listEnvelope()) } },
    }),
  }),
};

/** `GET /{entity}/{id}/history` of one entity: the record's entries, newest first, also once it is deleted or purged. */
export function historyRoute<E extends RecordEntity>(entity: E) {
  const resource = recordResourceOf[entity];
  return defineRoute({
    method: "GET",
    path: `/${entity}/{id}/history`,
    service: "crm-records",
    permission: permission(resource, "read"),
    query: AUDIT_HISTORY_PARAMETERS,
    errors: [400001, 400019, 404001],
    docs: () => ({
      tags,
      summary: `A ${entity}'s audit entries, newest first (permission ${resource}.read)`,
      description:
        "Readable after the record was deleted or purged. An id the business never had a record or an entry for (another business's included), " +
        "or one that is not a UUID, is 404001; a record older than the audit log answers an empty list.",
      request: {
        params: z.object({ id: z.string().openapi({ param: { name: "id", in: "path" }, description: "Record id (UUID)" }) }),
        query: z.object(pagingQuery),
      },
      responses: { 200: { description: "A page of entries, newest first", ...jsonContent(listEnvelope()) } },
    }),
  });
}

/** Each entity's history route, by entity. */
export const historyRoutes = Object.fromEntries((Object.keys(recordContracts) as RecordEntity[]).map((entity) => [entity, { getHistory: historyRoute(entity) }])) as {
  [E in RecordEntity]: { getHistory: ReturnType<typeof historyRoute<E>> };
};
