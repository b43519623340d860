// The change feed (extensions §E6): served by crm-records, which owns the events' history (its outbox).
import { dataEnvelope } from "../envelope";
import { FEED_PER_PAGE_MAX, FEED_TYPES_MAX, FEED_WAIT_MAX_S, feedItemSchema, feedMetaSchema } from "../feed";
import { jsonContent } from "../openapi-responses";
import { z } from "../zod";
import { defineRoute } from "./route";

const feedQuery = z.object({
  after: z.string().optional().openapi({ description: "A nextCursor from an earlier answer; without it the feed starts at the oldest event kept" }),
  types: z
    .string()
    .optional()
    .openapi({
      description: `Comma-separated event names or \`{entity}.*\`, at most ${FEED_TYPES_MAX}; unknown names are 400001. Only events of entities you may read are returned`,
      example: "client.*,invoice.created",
    }),
  perPage: z
    .string()
    .optional()
    .openapi({ description: `1-${FEED_PER_PAGE_MAX}, default ${FEED_PER_PAGE_MAX}` }),
  fields: z.string().optional().openapi({
    description:
      "Comma-separated fields of each event's data to keep (id always); a name must be a field of an entity whose events the answer may hold, or customFields.<key> for an active custom field of one, else 400019",
    example: "email,updatedAt",
  }),
  wait: z
    .string()
    .optional()
    .openapi({ description: `0-${FEED_WAIT_MAX_S} seconds: when nothing follows the cursor, wait until an event commits or the time ends (then data may be [])` }),
});

export const feedRoutes = {
  listEvents: defineRoute({
    method: "GET",
    path: "/events",
    service: "crm-records",
    errors: [400001, 400019, 401014, 410000],
    query: ["after", "types", "perPage", "wait", "fields"],
    waitsUpToMs: FEED_WAIT_MAX_S * 1000,
    docs: () => ({
      tags: ["Change feed"],
      summary: "The business's events in commit order, oldest first, each exactly once (extensions §E6)",
      description:
        "Each item is the bus envelope (the same event a webhook is sent, with its id to de-duplicate on and previousAttributes on updates). " +
        "Resume from meta.nextCursor, which is never null. A cursor older than what is kept (EVENTS_RETENTION_DAYS) is 410000; one the product did not make, or another business's, is 400019.",
      request: { query: feedQuery },
      responses: { 200: { description: "OK", ...jsonContent(dataEnvelope(z.array(feedItemSchema)).extend({ meta: feedMetaSchema })) } },
    }),
  }),
};
