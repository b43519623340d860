import type { BatchEventHandler, BusEvent } from "@crm/event-bus";
import type { Logger } from "@crm/logger";
import { activeTraceHeaders, type TraceCarrier } from "@crm/telemetry";
import { serializePayload } from "../domain/payload";
import { WebhookFilters } from "../domain/webhook-filter";
import type { ClaimedDelivery, DeliveryRepository, NewEvent } from "../persistence/delivery.repository";
import type { DeliveryScheduler } from "../scheduler/delivery-scheduler";
import { RecentSet } from "@crm/service-kit";

export interface RecordsConsumerDeps {
  deliveries: DeliveryRepository;
  scheduler: Pick<DeliveryScheduler, "sendNew">;
  logger: Logger;
  now?: () => Date;
  /**
   * WEBHOOK_CONSUMER_LOOKUP_FIRST (docs/performance.md D27): the small lookup first (see below); false
   * sends every batch straight to createForEvents, whose statement finds the subscribers. On when omitted.
   */
  lookupFirst?: boolean;
}

/**
 * Handles consecutive record events together: a delivery record per active webhook of the event's
 * business subscribed to it, created with the lookup of those webhooks in one statement for all the
 * events, idempotent on the event id (at-least-once bus). A webhook with a filter the event's data
 * does not match gets no record at all (extensions §E1.5); those with a filter that matches get
 * theirs from a second statement, per event. The first attempts start after the records have
 * committed but are not awaited: the consumer never waits on receivers.
 *
 * Most businesses have no webhook, and building that statement (every event's payload serialized and
 * escaped into an array, then parsed and planned by PostgreSQL) cost more than the events' handling
 * otherwise did. So unless every business of the batch had subscribers when last looked up, a small
 * statement first finds which events have any, and only those go further (none: nothing more is
 * done). What the consumer remembers is only which businesses to look up first: either way the
 * subscribers are read from the database for every batch, so a webhook created on another instance
 * gets the very next event.
 */
export function createRecordsConsumer(deps: RecordsConsumerDeps): BatchEventHandler {
  const now = deps.now ?? (() => new Date());
  const filters = new WebhookFilters();
  const withSubscribers = new RecentSet(Number.POSITIVE_INFINITY, MAX_REMEMBERED_BUSINESSES);
  const lookupFirst = deps.lookupFirst ?? true;
  return async (received: readonly BusEvent[]) => {
    const batch = lookupFirst ? await withSubscribersOnly(received) : received;
    if (batch.length === 0) return;
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
    await deps.scheduler.sendNew(
      events.map((e) => e.businessId),
      async (lease) => {
        const created = await deps.deliveries.createForEvents(events, at, lease);
        // A business that got nothing (no subscriber left, or events seen already) is looked up first next time.
        const served = new Set([...created.claims.map((c) => c.businessId), ...created.due.keys(), ...created.filtered.map((f) => events[f.index]!.businessId)]);
        for (const e of events) if (!served.has(e.businessId)) withSubscribers.delete(e.businessId);
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

  /** The events of `batch` that a webhook is subscribed to, in order (see above). */
  async function withSubscribersOnly(batch: readonly BusEvent[]): Promise<readonly BusEvent[]> {
    if (batch.every(({ event }) => withSubscribers.has(event.businessId))) return batch;
    // One lookup per business and type.
    const pairs = new Map<string, { businessId: string; event: string; index: number }>();
    const pairOf = batch.map(({ event }) => {
      const key = `${event.businessId}\u0000${event.type}`;
      let pair = pairs.get(key);
      if (!pair) pairs.set(key, (pair = { businessId: event.businessId, event: event.type, index: pairs.size }));
      return pair.index;
    });
    const subscribed = await deps.deliveries.subscribed([...pairs.values()]);
    const found = new Set([...pairs.values()].filter((p) => subscribed.has(p.index)).map((p) => p.businessId));
    for (const { businessId } of pairs.values()) {
      if (found.has(businessId)) withSubscribers.add(businessId);
      else withSubscribers.delete(businessId);
    }
    return batch.filter((_, i) => subscribed.has(pairOf[i]!));
  }

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

/** Businesses remembered as having subscribers, at most (the oldest are forgotten first). */
const MAX_REMEMBERED_BUSINESSES = 10_000;
