// Request and response schemas of the webhooks context (interface §2, §4, §6; decisions §6, §8).
// The webhook-delivery service validates with these; its routes (routes/webhooks.routes.ts) document them.
import { z } from "./zod";
import { eventCatalogue, isEventName } from "./events";

/** Longest accepted webhook URL; longer ones are not real receivers. */
export const WEBHOOK_URL_MAX_LENGTH = 2048;
export const WEBHOOK_DESCRIPTION_MAX_LENGTH = 1000;

/** Event name of the record `POST /webhook/{id}/test` creates (decisions §6). */
export const WEBHOOK_TEST_EVENT = "webhook.test";

export const deliveryStatuses = ["PENDING", "SUCCESS", "RETRYING", "FAILED"] as const;
export type DeliveryStatus = (typeof deliveryStatuses)[number];

const webhookUrl = z
  .string()
  .min(1)
  .max(WEBHOOK_URL_MAX_LENGTH)
  .openapi({ description: "Absolute https: (recommended) or http: URL; literal loopback/private addresses are refused", example: "https://example.com/hooks/crm" });

const webhookEvents = z
  .array(z.string().refine(isEventName, { message: "Unknown event name" }))
  .min(1, { message: "At least one event is required" })
  .openapi({ description: "Event names to receive", example: ["client.created", "invoice.updated"], items: { type: "string", enum: [...eventCatalogue] } });

const webhookDescription = z.string().max(WEBHOOK_DESCRIPTION_MAX_LENGTH);

const webhookFilter = z
  .string()
  .nullable()
  .openapi({
    description:
      "Only events whose data matches are delivered (extensions §E1.5): a where expression of the list grammar " +
      "(field:value, field:op:value, OR:[...], NOT:...), naming only fields every subscribed entity has. " +
      "customFields.<key> names a custom value (a valid key; typed by its cast, compared in the value's own type; on a multiSelect, eq means contains the option). " +
      "null (the default) delivers every subscribed event. " +
      "Invalid: 400001 with details[0].path filter.",
    example: "status:PAID,totalAmount:gte:1000",
  });

/** Bounds of `autoDisableAfter` (extensions §E1.3). */
export const WEBHOOK_AUTO_DISABLE_MAX = 1000;
/** The only `disabledReason` there is: the webhook deactivated itself after failing too often. */
export const WEBHOOK_DISABLED_CONSECUTIVE_FAILURES = "consecutive_failures";

const autoDisableAfter = z.number().int().min(1).max(WEBHOOK_AUTO_DISABLE_MAX).nullable().optional().openapi({
  description: "Deactivate the webhook (isActive false, disabledReason consecutive_failures) when consecutiveFailures reaches this (1-1000); null (the default) = never",
  example: 50,
});

export const webhookCreateSchema = z
  .object({
    url: webhookUrl,
    events: webhookEvents,
    description: webhookDescription.optional().openapi({ description: 'Free text; default ""' }),
    filter: webhookFilter.optional(),
    autoDisableAfter,
  })
  .strict()
  .openapi("WebhookCreate", {
    example: { url: "https://example.com/hooks/crm", events: ["invoice.created", "invoice.updated"], description: "Accounting sync", filter: "status:PAID", autoDisableAfter: 50 },
  });
export type WebhookCreate = z.infer<typeof webhookCreateSchema>;

export const webhookUpdateSchema = z
  .object({
    url: webhookUrl.optional(),
    events: webhookEvents.optional(),
    description: webhookDescription.optional(),
    isActive: z.boolean().optional().openapi({ description: "true also resets consecutiveFailures to 0 and disabledReason to null" }),
    filter: webhookFilter.optional().openapi({ description: "A new filter, or null to remove it; re-checked against the events when either changes" }),
    autoDisableAfter,
  })
  .strict()
  .openapi("WebhookUpdate", { example: { events: ["invoice.updated"], isActive: true } });
export type WebhookUpdate = z.infer<typeof webhookUpdateSchema>;

/** Longest grace period of a rotated-away secret: 7 days (extensions §E1.1). */
export const WEBHOOK_MAX_GRACE_PERIOD_SECONDS = 604_800;

export const webhookRotateSecretSchema = z
  .object({
    gracePeriodSeconds: z.number().int().min(0).max(WEBHOOK_MAX_GRACE_PERIOD_SECONDS).optional().openapi({
      description:
        "How long the old secret stays valid beside the new one, in seconds (0-604800, default 0). While it runs, webhook-signature carries two signatures, new first, then old; X-Service-Signature always uses the new secret",
      example: 86400,
    }),
  })
  .strict()
  .openapi("WebhookRotateSecret", { example: { gracePeriodSeconds: 86400 } });
export type WebhookRotateSecret = z.infer<typeof webhookRotateSecretSchema>;

/** Widest window `POST /webhook/{id}/recover` accepts: 14 days (extensions §E1.2). */
export const WEBHOOK_RECOVER_MAX_WINDOW_MS = 14 * 24 * 3600 * 1000;
/**
 * Most deliveries one `POST /webhook/{id}/recover` re-sends (issue 35 item 8): the window bounds time,
 * this bounds the work one call (one unit of rate limit) starts; `remaining` says to call again.
 */
export const WEBHOOK_RECOVER_MAX_PER_CALL = 1_000;

const recoverTimestamp = z.iso.datetime({ offset: true, message: "Expected an ISO 8601 date-time" });

export const webhookRecoverSchema = z
  .object({
    since: recoverTimestamp.openapi({ description: "Start of the window (inclusive), by delivery creation time", example: "2026-01-01T00:00:00Z" }),
    until: recoverTimestamp
      .optional()
      .openapi({ description: "End of the window (exclusive); default now. After since, and at most 14 days after it", example: "2026-01-02T00:00:00Z" }),
  })
  .strict()
  .openapi("WebhookRecover", { example: { since: "2026-01-01T00:00:00Z", until: "2026-01-02T00:00:00Z" } });
export type WebhookRecover = z.infer<typeof webhookRecoverSchema>;

export const webhookRecoverResultSchema = z
  .object({
    recovered: z
      .number()
      .int()
      .openapi({ description: `FAILED deliveries given one new attempt, the oldest first, at most ${WEBHOOK_RECOVER_MAX_PER_CALL} per call` }),
    remaining: z.number().int().openapi({ description: "FAILED deliveries of the window this call left for the next one: call again until it is 0" }),
  })
  .openapi("WebhookRecoverResult");

export const webhookSchema = z
  .object({
    id: z.string(),
    businessId: z.string(),
    url: z.string(),
    events: z.array(z.string()),
    description: z.string(),
    secretPrefix: z.string().openapi({ example: "whsec_AbCdEf" }),
    isActive: z.boolean(),
    filter: z.string().nullable().openapi({ description: "where expression over each event's data; null delivers every subscribed event" }),
    consecutiveFailures: z.number().int().openapi({ description: "Failed attempts since the last successful one; a success resets it to 0, and so does PUT isActive true" }),
    lastSuccessAt: z.string().nullable().openapi({ format: "date-time", description: "When an attempt last succeeded; null if none ever did" }),
    lastFailureAt: z.string().nullable().openapi({ format: "date-time", description: "When an attempt last failed; null if none ever did" }),
    autoDisableAfter: z.number().int().nullable().openapi({ description: "Consecutive failures that deactivate the webhook; null = never" }),
    disabledReason: z
      .enum([WEBHOOK_DISABLED_CONSECUTIVE_FAILURES])
      .nullable()
      .openapi({ description: "consecutive_failures when the webhook deactivated itself (autoDisableAfter); null otherwise" }),
    previousSecretExpiresAt: z.string().nullable().openapi({
      format: "date-time",
      description: "Until when the secret rotated away most recently still signs deliveries (second webhook-signature); null when no grace period runs",
    }),
    createdAt: z.string().openapi({ format: "date-time" }),
    updatedAt: z.string().openapi({ format: "date-time" }),
  })
  .openapi("Webhook");
export type WebhookView = z.infer<typeof webhookSchema>;

/** Only the creation and rotate-secret responses carry the secret. */
export const webhookWithSecretSchema = webhookSchema
  .extend({ secret: z.string().openapi({ description: "Signing secret (whsec_...); shown only in this response" }) })
  .openapi("WebhookWithSecret");
export type WebhookWithSecretView = z.infer<typeof webhookWithSecretSchema>;

export const deliverySchema = z
  .object({
    id: z.string().openapi({ description: "Also the X-Service-Delivery-Id of every attempt" }),
    webhookId: z.string(),
    event: z.string(),
    status: z.enum(deliveryStatuses),
    responseStatus: z.number().int().nullable().openapi({ description: "HTTP status of the last attempt; 0 when no HTTP answer came; null before the first attempt" }),
    responseBody: z.string().nullable().openapi({ description: "First 4,096 characters of the last answer, or the error text" }),
    attempt: z.number().int(),
    nextRetryAt: z.string().nullable().openapi({ format: "date-time" }),
    createdAt: z.string().openapi({ format: "date-time" }),
    updatedAt: z.string().openapi({ format: "date-time" }),
  })
  .openapi("WebhookDelivery");
export type DeliveryView = z.infer<typeof deliverySchema>;

/** The body of every delivery POSTed to a webhook's url (interface §6). */
export const webhookEventPayloadSchema = z
  .object({
    event: z.string().openapi({ description: "Event name, {entity}.{action}", example: "client.created" }),
    data: z.object({}).passthrough().openapi({
      description:
        "The affected record as GET returns it without relations (for *.deleted: as it was); for client.created: id, firstName, lastName, email, businessId, createdAt and the other client fields",
    }),
    previousAttributes: z
      .object({})
      .passthrough()
      .optional()
      .openapi({
        description:
          "Only on {entity}.updated: each field the update changed, with its value before, as GET showed it (items count as one field; " +
          "recomputed fields such as totalAmount are included; updatedAt is not). {} when nothing changed.",
      }),
    businessId: z.string(),
    timestamp: z.string().openapi({ description: "When the event happened, ISO 8601 with milliseconds", example: "2026-01-01T12:00:00.000Z" }),
  })
  .openapi("WebhookEventPayload");
