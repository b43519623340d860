// The webhook-delivery service's routes (interface §2, §4, §6; decisions §6, §8; extensions §E1).
// The interface names PUT for an update, and only PUT: there is no PATCH of a webhook.
import type { OpenAPIRegistry } from "@asteasolutions/zod-to-openapi";
import { dataEnvelope, listEnvelope, paginationQuerySchema } from "../envelope";
import { jsonContent } from "../openapi-responses";
import {
  deliverySchema,
  WEBHOOK_RECOVER_MAX_PER_CALL,
  webhookCreateSchema,
  webhookEventPayloadSchema,
  webhookRecoverResultSchema,
  webhookRecoverSchema,
  webhookRotateSecretSchema,
  webhookSchema,
  webhookUpdateSchema,
  webhookWithSecretSchema,
} from "../webhooks";
import { z } from "../zod";
import { registerRoutesOpenApi } from "./openapi";
import { defineRoute } from "./route";

const idParams = z.object({ id: z.string().openapi({ param: { name: "id", in: "path" } }) });
const deliveryParams = idParams.extend({ deliveryId: z.string().openapi({ param: { name: "deliveryId", in: "path" } }) });

const deliveryHeader = (name: string, description: string) => ({ name, in: "header" as const, required: true, description, schema: { type: "string" as const } });

/** A delivery, described as an OpenAPI callback of webhook creation: what the receiver gets and must answer. */
const deliveryCallback = {
  delivery: {
    "{$request.body#/url}": {
      post: {
        summary: "One event, signed: verify X-Service-Signature over the raw body before parsing it",
        parameters: [
          deliveryHeader("X-Service-Signature", "sha256=<hex HMAC-SHA256 of the raw body, keyed by the lowercase hex SHA-256 of the webhook secret>"),
          deliveryHeader("X-Service-Event", "The event name"),
          deliveryHeader("X-Service-Delivery-Id", "The delivery id, the same on every attempt: de-duplicate on it"),
          deliveryHeader("webhook-id", "Standard Webhooks: the delivery id"),
          deliveryHeader("webhook-timestamp", "Standard Webhooks: seconds since the epoch when the attempt was sent"),
          deliveryHeader(
            "webhook-signature",
            "Standard Webhooks: v1,<base64 HMAC-SHA256 of id.timestamp.body>; during a rotation's grace period two space-separated signatures, the new secret's first, then the old one's",
          ),
        ],
        requestBody: { required: true, content: { "application/json": { schema: { $ref: "#/components/schemas/WebhookEventPayload" } } } },
        responses: {
          "200": { description: "Any 2xx within 10 seconds counts as delivered" },
          "4XX": { description: "Not delivered: like any other non-2xx answer (or none within 10 s), retried after about 60 s, then 300 s, then marked FAILED" },
          "5XX": { description: "Not delivered: retried like a 4xx" },
        },
      },
    },
  },
};

const service = "webhook-delivery";
const tags = ["Webhooks"];
const one = () => dataEnvelope(webhookSchema);

export const webhookRoutes = {
  create: defineRoute({
    method: "POST",
    path: "/webhook",
    service,
    permission: "webhooks.create",
    errors: [400001, 400002, 413000, 415000],
    body: { schema: webhookCreateSchema, required: true },
    docs: () => ({
      tags,
      summary: "Create a webhook (permission webhooks.create); the secret is shown only here",
      description: "Deliveries carry whole records: subscribing to {entity}.* needs that entity's {resource}.read too, else 401014 (extensions §E10).",
      callbacks: deliveryCallback,
      responses: { 201: { description: "Created", ...jsonContent(dataEnvelope(webhookWithSecretSchema)) } },
    }),
  }),
  list: defineRoute({
    method: "GET",
    path: "/webhook",
    service,
    permission: "webhooks.read",
    errors: [400001],
    docs: () => ({
      tags,
      summary: "List webhooks, newest first (permission webhooks.read)",
      request: { query: paginationQuerySchema },
      responses: { 200: { description: "OK", ...jsonContent(listEnvelope(webhookSchema)) } },
    }),
  }),
  get: defineRoute({
    method: "GET",
    path: "/webhook/{id}",
    service,
    permission: "webhooks.read",
    errors: [404001],
    docs: () => ({
      tags,
      summary: "Get a webhook (permission webhooks.read)",
      request: { params: idParams },
      responses: { 200: { description: "OK", ...jsonContent(one()) } },
    }),
  }),
  update: defineRoute({
    method: "PUT",
    path: "/webhook/{id}",
    service,
    permission: "webhooks.update",
    errors: [400001, 400002, 404001, 413000, 415000],
    body: { schema: webhookUpdateSchema, required: true },
    docs: () => ({
      tags,
      summary: "Update any of url, events, description, isActive, filter, autoDisableAfter; isActive true also resets the health (permission webhooks.update)",
      description:
        "A change of events, url or filter needs {resource}.read of every entity the webhook then subscribes to, else 401014 (extensions §E10): " +
        "whoever decides what is sent, or where, must be able to read it.",
      request: { params: idParams },
      responses: { 200: { description: "The updated webhook", ...jsonContent(one()) } },
    }),
  }),
  deactivate: defineRoute({
    method: "DELETE",
    path: "/webhook/{id}",
    service,
    permission: "webhooks.delete",
    errors: [404001],
    docs: () => ({
      tags,
      summary: "Deactivate a webhook; the record is kept (permission webhooks.delete)",
      request: { params: idParams },
      responses: { 200: { description: "The webhook, isActive false", ...jsonContent(one()) } },
    }),
  }),
  test: defineRoute({
    method: "POST",
    path: "/webhook/{id}/test",
    service,
    permission: "webhooks.update",
    errors: [404001],
    docs: () => ({
      tags,
      summary: "Create a PENDING webhook.test delivery record; no HTTP call is made (permission webhooks.update)",
      request: { params: idParams },
      responses: { 201: { description: "The new delivery record", ...jsonContent(dataEnvelope(deliverySchema)) } },
    }),
  }),
  rotateSecret: defineRoute({
    method: "POST",
    path: "/webhook/{id}/rotate-secret",
    service,
    permission: "webhooks.update",
    errors: [400001, 400002, 404001, 413000, 415000],
    body: { schema: webhookRotateSecretSchema, required: false },
    docs: () => ({
      tags,
      summary:
        "Replace the signing secret; the new one is shown only here. With gracePeriodSeconds, the old one keeps signing beside it (second webhook-signature) until previousSecretExpiresAt (permission webhooks.update)",
      request: { params: idParams },
      responses: { 200: { description: "The webhook with its new secret", ...jsonContent(dataEnvelope(webhookWithSecretSchema)) } },
    }),
  }),
  listDeliveries: defineRoute({
    method: "GET",
    path: "/webhook/{id}/deliveries",
    service,
    permission: "webhooks.read",
    errors: [400001, 404001],
    docs: () => ({
      tags,
      summary: "Delivery log of a webhook, newest first (permission webhooks.read)",
      request: { params: idParams, query: paginationQuerySchema },
      responses: { 200: { description: "OK", ...jsonContent(listEnvelope(deliverySchema)) } },
    }),
  }),
  retryDelivery: defineRoute({
    method: "POST",
    path: "/webhook/{id}/deliveries/{deliveryId}/retry",
    service,
    permission: "webhooks.update",
    errors: [404001, 409004],
    docs: () => ({
      tags,
      summary: "Re-send a FAILED delivery now, as a new attempt on the same record (permission webhooks.update)",
      request: { params: deliveryParams },
      responses: { 202: { description: "Accepted; the delivery record", ...jsonContent(dataEnvelope(deliverySchema)) } },
    }),
  }),
  recover: defineRoute({
    method: "POST",
    path: "/webhook/{id}/recover",
    service,
    permission: "webhooks.update",
    errors: [400001, 400002, 404001, 409004, 413000, 415000],
    body: { schema: webhookRecoverSchema, required: true },
    docs: () => ({
      tags,
      summary:
        "Give every FAILED delivery of this webhook created in [since, until) one new attempt now, like a manual retry (same record and X-Service-Delivery-Id, no automatic retries after it); an inactive webhook answers 409004 (permission webhooks.update)",
      description:
        `At most ${WEBHOOK_RECOVER_MAX_PER_CALL} deliveries per call, the oldest first; data.remaining counts the FAILED ones of the window left, so call again until it is 0. ` +
        "Recovered deliveries show PENDING until their attempt, which is made within the business's own share of the delivery workers, like its first attempts.",
      request: { params: idParams },
      responses: { 202: { description: "Accepted; how many deliveries were recovered", ...jsonContent(dataEnvelope(webhookRecoverResultSchema)) } },
    }),
  }),
};

/** The webhooks context in the OpenAPI document: the signed payload its callback refers to, then its routes. */
export function registerWebhooksOpenApi(registry: OpenAPIRegistry): void {
  registry.register("WebhookEventPayload", webhookEventPayloadSchema);
  registerRoutesOpenApi(registry, { routes: webhookRoutes, resource: { one: "Webhook", many: "Webhooks" } });
}
