// What every consumer of this process reports, whichever bus carries the events: events handled and
// failed, the time from the write to the end of handling, and (tracing on) a consumer span that
// continues the write's trace from the message's `traceparent`.
import type { EventEnvelope } from "@crm/contracts";
import { consumerMetrics, startSpan } from "@crm/telemetry";
import type { BatchEventHandler, EventContext, EventHandler } from "./event-bus";

/** `handler`, counted and traced as `service`'s consumer of `topic`. */
export function instrumentHandler(service: string, topic: string, handler: EventHandler): EventHandler {
  const metrics = consumerMetrics();
  const errors = metrics.errors.labels(topic);
  const delay = metrics.delay.labels(topic);
  return async (event: EventEnvelope, context?: EventContext) => {
    const span = startSpan(service, `consume ${topic}`, {
      kind: "consumer",
      parent: context?.headers ?? {},
      attributes: { "messaging.destination.name": topic, "crm.event.type": event.type, "crm.event.id": event.id },
    });
    try {
      await (span ? span.run(() => handler(event, context)) : handler(event, context));
    } catch (err) {
      errors.inc();
      span?.fail(err instanceof Error ? err.message : undefined);
      throw err;
    } finally {
      span?.end();
    }
    metrics.consumed.labels(topic, event.type).inc();
    const occurredAt = Date.parse(event.occurredAt);
    if (!Number.isNaN(occurredAt)) delay.observe(Math.max(0, Date.now() - occurredAt) / 1000);
  };
}

/**
 * `handler`, counted and traced per event as instrumentHandler does: each event gets its consumer
 * span (ended when the batch is handled) and finds its headers in `context.trace`, since the batch
 * runs in no single event's span.
 */
export function instrumentBatchHandler(service: string, topic: string, handler: BatchEventHandler): BatchEventHandler {
  const metrics = consumerMetrics();
  const errors = metrics.errors.labels(topic);
  const delay = metrics.delay.labels(topic);
  return async (events) => {
    const spans = events.map(({ event, context }) =>
      startSpan(service, `consume ${topic}`, {
        kind: "consumer",
        parent: context.headers,
        attributes: { "messaging.destination.name": topic, "crm.event.type": event.type, "crm.event.id": event.id },
      }),
    );
    try {
      await handler(spans.some(Boolean) ? events.map((e, i) => ({ event: e.event, context: { ...e.context, trace: spans[i]?.headers() } })) : events);
    } catch (err) {
      errors.inc(events.length);
      for (const span of spans) span?.fail(err instanceof Error ? err.message : undefined);
      throw err;
    } finally {
      for (const span of spans) span?.end();
    }
    const now = Date.now();
    for (const { event } of events) {
      metrics.consumed.labels(topic, event.type).inc();
      const occurredAt = Date.parse(event.occurredAt);
      if (!Number.isNaN(occurredAt)) delay.observe(Math.max(0, now - occurredAt) / 1000);
    }
  };
}
