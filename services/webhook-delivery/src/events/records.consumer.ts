import type { BatchEventHandler, BusEvent } from "@crm/event-bus";
import type { Logger } from "@crm/logger";
import { activeTraceHeaders, type TraceCarrier } from "@crm/telemetry";
import { serializePayload } from "../domain/payload";
import { WebhookFilters } from "../domain/webhook-filter";
import type { ClaimedDelivery, DeliveryRepository, NewEvent } from "../persistence/delivery.repository";
import type { AttemptExecutor } from "../application/attempt-executor";

export interface RecordsConsumerDeps {
  deliveries: DeliveryRepository;
  executor: AttemptExecutor;
  logger: Logger;
  now?: () => Date;
}

/**
 * Handles consecutive record events together: a delivery record per active webhook of the event's
 * business subscribed to it, created with the lookup of those webhooks in one statement for all the
 * events, idempotent on the event id (at-least-once bus). A webhook with a filter the event's data
 * does not match gets no record at all (extensions §E1.5); those with a filter that matches get
 * theirs from a second statement, per event. The first attempts start after the records have
 * committed but are not awaited: the consumer never waits on receivers.
 */
export function createRecordsConsumer(deps: RecordsConsumerDeps): BatchEventHandler {
  const now = deps.now ?? (() => new Date());
  const filters = new WebhookFilters();
  return async (batch: readonly BusEvent[]) => {
    const at = now();
    const events: NewEvent[] = batch.map(({ event }) => {
      let occurredAt = new Date(event.occurredAt);
      if (Number.isNaN(occurredAt.getTime())) {
        // A producer bug must not block the partition behind this event forever.
        deps.logger.warn({ eventId: event.id, occurredAt: event.occurredAt }, "event has no valid occurredAt; using the receipt time");
        occurredAt = at;
      }
      const payload = serializePayload({
        event: event.type,
        data: event.data,
        ...(event.previousAttributes !== undefined && { previousAttributes: event.previousAttributes }),
        businessId: event.businessId,
        timestamp: occurredAt,
      });
      return { eventId: event.id, businessId: event.businessId, event: event.type, payload };
    });
    // Each event's attempts continue its consumer span (tracing on).
    const fallback = activeTraceHeaders();
    const traces = new Map<string, TraceCarrier | undefined>(batch.map(({ event, context }) => [event.id, context.trace ?? fallback]));
    const traceOfClaim = new Map<string, TraceCarrier | undefined>();
    await deps.executor.sendNew(
      events.map((e) => e.businessId),
      async (lease) => {
        const created = await deps.deliveries.createForEvents(events, at, lease);
        const claims: Array<ClaimedDelivery & { eventId: string }> = created.claims;
        const due = new Map(created.due);
        if (created.filtered.length > 0) {
          const leased = new Map<string, number>();
          for (const claim of claims) leased.set(claim.businessId, (leased.get(claim.businessId) ?? 0) + 1);
          for (const [index, webhookIds] of matching(batch, created.filtered)) {
            const event = events[index]!;
            const room = Math.max(0, (lease.limits.get(event.businessId) ?? 0) - (leased.get(event.businessId) ?? 0));
            const more = await deps.deliveries.createForEvent({ ...event, webhookIds, now: at }, { leaseUntil: lease.leaseUntil, limit: room });
            leased.set(event.businessId, (leased.get(event.businessId) ?? 0) + more.length);
            // At most: some may have existed already (a re-delivered event); the backlog then finds nothing.
            if (webhookIds.length > more.length) due.set(event.businessId, (due.get(event.businessId) ?? 0) + webhookIds.length - more.length);
            claims.push(...more.map((claim) => ({ ...claim, eventId: event.eventId })));
          }
        }
        for (const claim of claims) traceOfClaim.set(claim.id, traces.get(claim.eventId));
        return { claims, due };
      },
      (claim) => traceOfClaim.get(claim.id),
    );
  };

  /** The filtered subscribers whose filter lets their event through, grouped per event index, in order. */
  function matching(batch: readonly BusEvent[], filtered: ReadonlyArray<{ index: number; webhookId: string; filter: string }>): Map<number, string[]> {
    const out = new Map<number, string[]>();
    for (const { index, webhookId, filter } of filtered) {
      const { event } = batch[index]!;
      const lets = filters.matches(filter, event.type, event.data, (err) =>
        deps.logger.warn({ webhookId, eventId: event.id, err }, "webhook filter cannot be read for this event; delivering it"),
      );
      if (!lets) continue;
      const ids = out.get(index);
      if (ids) ids.push(webhookId);
      else out.set(index, [webhookId]);
    }
    return out;
  }
}
