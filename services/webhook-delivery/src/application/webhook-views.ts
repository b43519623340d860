// The public shapes of a webhook and a delivery, as answers and audit entries (extensions §E7) show them:
// used by the HTTP routes and by the use cases that audit a webhook's changes, so they live beside the latter.
import { WEBHOOK_DISABLED_CONSECUTIVE_FAILURES, type DeliveryView, type WebhookView, type WebhookWithSecretView } from "@crm/contracts";
import { redactUrlCredentials } from "../domain/url-credentials";
import type { Delivery, Webhook } from "../generated/prisma/client";

/** The public shape of a webhook: everything but the secret, and any password in the URL redacted. */
export function webhookView(row: Webhook, now: Date = new Date()): WebhookView {
  const graceEnds = row.previousSecret !== null && row.previousSecretExpiresAt !== null && row.previousSecretExpiresAt > now ? row.previousSecretExpiresAt : null;
  return {
    id: row.id,
    businessId: row.businessId,
    url: redactUrlCredentials(row.url),
    events: row.events,
    description: row.description,
    secretPrefix: row.secretPrefix,
    isActive: row.isActive,
    filter: row.filter,
    consecutiveFailures: row.consecutiveFailures,
    lastSuccessAt: row.lastSuccessAt?.toISOString() ?? null,
    lastFailureAt: row.lastFailureAt?.toISOString() ?? null,
    autoDisableAfter: row.autoDisableAfter,
    disabledReason: row.disabledReason === WEBHOOK_DISABLED_CONSECUTIVE_FAILURES ? WEBHOOK_DISABLED_CONSECUTIVE_FAILURES : null,
    previousSecretExpiresAt: graceEnds?.toISOString() ?? null,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

/**
 * Only for the two responses that show a secret once: creation and rotation. The secret comes from the
 * handler that generated it (the row only holds it sealed).
 */
export function webhookWithSecretView(row: Webhook, secret: string, now?: Date): WebhookWithSecretView {
  return { ...webhookView(row, now), secret };
}

export function deliveryView(row: Delivery): DeliveryView {
  return {
    id: row.id,
    webhookId: row.webhookId,
    event: row.event,
    status: row.status,
    responseStatus: row.responseStatus,
    responseBody: row.responseBody,
    attempt: row.attempt,
    nextRetryAt: row.nextRetryAt?.toISOString() ?? null,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}
