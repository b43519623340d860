import type { EventEnvelope } from "@crm/contracts";
import type { EventHandler } from "@crm/event-bus";
import type { Logger } from "@crm/logger";
import { serializePayload } from "../domain/payload";
import { WebhookFilters } from "../domain/webhook-filter";
import type { DeliveryRepository } from "../persistence/delivery.repository";
import type { WebhookRepository } from "../persistence/webhook.repository";
import type { AttemptExecutor } from "../application/attempt-executor";

export interface RecordsConsumerDeps {
  webhooks: WebhookRepository;
  deliveries: DeliveryRepository;
  executor: AttemptExecutor;
  logger: Logger;
  now?: () => Date;
}

/**
 * Handles one record event: a delivery record per active webhook of that business subscribed to the
 * event, created in one statement and idempotent on the event id (at-least-once bus). The first
 * attempts start after that commit but are not awaited: the consumer never waits on receivers.
 */
export function createRecordsConsumer(deps: RecordsConsumerDeps): EventHandler {
  const now = deps.now ?? (() => new Date());
  const filters = new WebhookFilters();
  return async (event: EventEnvelope) => {
    // A webhook whose filter the event's data does not match gets no delivery record at all (extensions §E1.5).
    const subscribers = (await deps.webhooks.subscribers(event.businessId, event.type)).filter((w) =>
      filters.matches(w.filter, event.type, event.data, (err) =>
        deps.logger.warn({ webhookId: w.id, eventId: event.id, err }, "webhook filter cannot be read for this event; delivering it"),
      ),
    );
    if (subscribers.length === 0) return;
    const at = now();
    let occurredAt = new Date(event.occurredAt);
    if (Number.isNaN(occurredAt.getTime())) {
      // A producer bug must not block the partition behind this event forever.
      deps.logger.warn({ eventId: event.id, occurredAt: event.occurredAt }, "event has no valid occurredAt; using the receipt time");
      occurredAt = at;
    }
    const webhookIds = subscribers.map((w) => w.id);
    const payload = serializePayload({
      event: event.type,
      data: event.data,
      ...(event.previousAttributes !== undefined && { previousAttributes: event.previousAttributes }),
      businessId: event.businessId,
      timestamp: occurredAt,
    });
    // The records are created already claimed by this process, as many as it has room for, and their
    // first attempts start once that statement has committed, without being awaited.
    await deps.executor.sendNew(event.businessId, webhookIds.length, (lease) =>
      deps.deliveries.createForEvent({ webhookIds, businessId: event.businessId, eventId: event.id, event: event.type, payload, now: at }, lease),
    );
  };
}
