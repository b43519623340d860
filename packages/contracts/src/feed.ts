// The change feed's shapes and bounds (extensions §E6).
import { z } from "./zod";

export const FEED_PER_PAGE_MAX = 100;
export const FEED_TYPES_MAX = 20;
export const FEED_WAIT_MAX_S = 30;
/** EVENTS_RETENTION_DAYS' default: how long events stay readable in the feed. */
export const EVENTS_RETENTION_DAYS_DEFAULT = 30;

export const feedItemSchema = z
  .object({
    id: z.string().openapi({ description: "The event's id: the same in a webhook's body; de-duplicate on it" }),
    type: z.string().openapi({ example: "client.updated" }),
    businessId: z.string(),
    occurredAt: z.string(),
    version: z.literal(1),
    data: z.record(z.string(), z.unknown()).openapi({ description: "The record as GET returns it without relations (as it was, for *.deleted)" }),
    previousAttributes: z.record(z.string(), z.unknown()).optional().openapi({ description: "On *.updated only: the changed fields' previous values" }),
  })
  .openapi("FeedEvent");

export const feedMetaSchema = z
  .object({
    perPage: z.number().int(),
    nextCursor: z.string().openapi({ description: "Where to resume; never null" }),
    hasMore: z.boolean(),
  })
  .openapi("FeedMeta");
