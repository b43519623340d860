// Prometheus metrics (prom-client), one registry per process: distributed, a process is one service;
// embedded, the four services share it and one endpoint serves them all. Every metric is declared
// here, in groups a service creates on first use, so a process exports only what it runs; the
// catalogue in docs/operations.md is checked against these declarations by a test.
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry, type CounterConfiguration, type GaugeConfiguration, type HistogramConfiguration } from "prom-client";

let processRegistry: Registry | undefined;

/** The registry of this process, with Node's default metrics (event-loop lag, heap, RSS, GC). */
export function metricsRegistry(): Registry {
  if (!processRegistry) {
    processRegistry = new Registry();
    collectDefaultMetrics({ register: processRegistry });
  }
  return processRegistry;
}

/** The body and content type of `GET /metrics`. */
export async function renderMetrics(): Promise<{ contentType: string; body: string }> {
  const registry = metricsRegistry();
  return { contentType: registry.contentType, body: await registry.metrics() };
}

const counter = <L extends string>(c: Omit<CounterConfiguration<L>, "registers">) => new Counter<L>({ ...c, registers: [metricsRegistry()] });
const histogram = <L extends string>(c: Omit<HistogramConfiguration<L>, "registers">) => new Histogram<L>({ ...c, registers: [metricsRegistry()] });
const gauge = <L extends string>(c: Omit<GaugeConfiguration<L>, "registers">) => new Gauge<L>({ ...c, registers: [metricsRegistry()] });

function once<T>(build: () => T): () => T {
  let value: T | undefined;
  return () => (value ??= build());
}

/** Latency buckets in seconds: 1 ms to 10 s, dense where an API answers. */
const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
/** Event age buckets in seconds: 5 ms to 10 min (an outage's backlog drains in minutes). */
const AGE_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 600];

export const httpMetrics = once(() => ({
  requests: counter({
    name: "crm_http_requests_total",
    help: "HTTP requests answered, by service, route template, method and status class (2xx, 4xx, ...)",
    labelNames: ["service", "route", "method", "status_class"],
  }),
  duration: histogram({
    name: "crm_http_request_duration_seconds",
    help: "Time from a request's arrival to its last byte sent, by service, route template, method and status class",
    labelNames: ["service", "route", "method", "status_class"],
    buckets: LATENCY_BUCKETS,
  }),
  inFlight: gauge({ name: "crm_http_requests_in_flight", help: "Requests being handled now, by service", labelNames: ["service"] }),
}));

export const gatewayMetrics = once(() => ({
  authentications: counter({
    name: "crm_gateway_authentications_total",
    help: "Authentication attempts on protected routes, by credential kind (jwt, api_key, none, malformed) and result (ok or the error code)",
    labelNames: ["kind", "result"],
  }),
  rateLimited: counter({ name: "crm_gateway_rate_limited_total", help: "Requests refused with 429000 by the rate limit" }),
  upstreamDuration: histogram({
    name: "crm_gateway_upstream_duration_seconds",
    help: "Time a forwarded request took at the service (to the whole answer read), by service and the service's status class",
    labelNames: ["service", "status_class"],
    buckets: LATENCY_BUCKETS,
  }),
  upstreamErrors: counter({
    name: "crm_gateway_upstream_errors_total",
    help: "Forwarded requests without a usable answer, by service and reason (unavailable: connection or time-out, answered 503000; too_large: answer over UPSTREAM_MAX_RESPONSE_BYTES, answered 500000; other: the answer broke off)",
    labelNames: ["service", "reason"],
  }),
  idempotentReplays: counter({ name: "crm_gateway_idempotent_replays_total", help: "POST requests answered from a kept Idempotency-Key answer" }),
  authCacheMisses: counter({
    name: "crm_gateway_auth_cache_misses_total",
    help: "Requests whose credential state the shared store did not hold, asked of identity instead, by what was missing (access_token, user, api_key) and result (ok, or unavailable: answered 503000)",
    labelNames: ["kind", "result"],
  }),
}));

export const outboxMetrics = once(() => ({
  unsent: gauge({
    name: "crm_outbox_unsent_rows",
    help: "Outbox rows not yet published (dead-lettered rows excluded), read from the database at scrape time",
    async collect() {
      this.set(sum(await outboxBacklog.read(), (b) => b.unsent));
    },
  }),
  oldestAge: gauge({
    name: "crm_outbox_oldest_unsent_age_seconds",
    help: "Age of the oldest unpublished outbox row (0 when none), read from the database at scrape time",
    async collect() {
      const oldest = Math.max(0, ...(await outboxBacklog.read()).map((b) => b.oldestAgeSeconds));
      this.set(oldest);
    },
  }),
  batches: counter({ name: "crm_outbox_publish_batches_total", help: "Publish requests the relay sent to the bus that succeeded" }),
  published: counter({ name: "crm_outbox_published_total", help: "Outbox rows published and marked sent" }),
  failures: counter({ name: "crm_outbox_publish_failures_total", help: "Publish requests that failed (transient: the relay backs off and retries; or refused for good)" }),
  deadLettered: counter({ name: "crm_outbox_dead_lettered_total", help: "Outbox rows the bus refused for good, set aside (never published)" }),
}));

export const consumerMetrics = once(() => ({
  consumed: counter({
    name: "crm_events_consumed_total",
    help: "Events handled successfully, by topic and event type",
    labelNames: ["topic", "type"],
  }),
  errors: counter({ name: "crm_event_handler_errors_total", help: "Event handler failures (the event is re-delivered), by topic", labelNames: ["topic"] }),
  delay: histogram({
    name: "crm_event_handling_delay_seconds",
    help: "Time from an event's occurredAt (the write's commit) to the end of its handling, by topic",
    labelNames: ["topic"],
    buckets: AGE_BUCKETS,
  }),
  lag: gauge({
    name: "crm_event_consumer_lag_messages",
    help: "Messages behind the partition's end after the last fetched batch, summed over this consumer's partitions, by topic (Kafka only)",
    labelNames: ["topic"],
  }),
}));

export const deliveryMetrics = once(() => ({
  attempts: counter({
    name: "crm_webhook_attempts_total",
    help: "Delivery attempts by outcome: success (2xx), http_error (other status), timeout, refused (SSRF guard), network_error",
    labelNames: ["outcome"],
  }),
  attemptDuration: histogram({
    name: "crm_webhook_attempt_duration_seconds",
    help: "Time of one delivery attempt (DNS, connect, request, answer), by outcome",
    labelNames: ["outcome"],
    buckets: LATENCY_BUCKETS,
  }),
  finished: counter({
    name: "crm_webhook_deliveries_finished_total",
    help: "Deliveries that reached a final state (SUCCESS, FAILED) through an attempt",
    labelNames: ["state"],
  }),
  cancelled: counter({
    name: "crm_webhook_deliveries_cancelled_total",
    help: "Deliveries ended FAILED without an attempt, by reason: webhook_inactive (deactivated while it waited), secret_unreadable (sealed with a key this process does not have)",
    labelNames: ["reason"],
  }),
  retriesDue: gauge({
    name: "crm_webhook_retries_due",
    help: "RETRYING deliveries whose next attempt is due now, read from the database at scrape time",
    async collect() {
      this.set(sum(await deliveryBacklog.read(), (b) => b.retriesDue));
    },
  }),
  claims: gauge({
    name: "crm_webhook_attempts_in_flight",
    help: "Attempts this process holds (waiting for a sending slot or being sent)",
    async collect() {
      this.set(sum(await deliveryLoad.read(), (l) => l.inFlight));
    },
  }),
  busiest: gauge({
    name: "crm_webhook_attempts_in_flight_busiest_business",
    help: "Attempts held for the one business holding the most (no label: which business is in the logs, not in metrics)",
    async collect() {
      this.set(Math.max(0, ...(await deliveryLoad.read()).map((l) => l.busiestBusiness)));
    },
  }),
  atCap: gauge({
    name: "crm_webhook_businesses_at_in_flight_cap",
    help: "Businesses holding as many attempts as WEBHOOK_MAX_IN_FLIGHT_PER_BUSINESS allows (their further events wait in the database)",
    async collect() {
      this.set(sum(await deliveryLoad.read(), (l) => l.businessesAtCap));
    },
  }),
}));

/** Every group, for the documentation test and for tools listing the catalogue. */
export function allMetricGroups(): void {
  httpMetrics();
  gatewayMetrics();
  outboxMetrics();
  consumerMetrics();
  deliveryMetrics();
}

function sum<T>(values: readonly T[], of: (value: T) => number): number {
  return values.reduce((total, v) => total + of(v), 0);
}

/** "2xx" for 204: the status class label, from a small fixed set. */
export function statusClass(status: number): string {
  return STATUS_CLASSES[Math.floor(status / 100)] ?? "other";
}
const STATUS_CLASSES = ["other", "1xx", "2xx", "3xx", "4xx", "5xx"];

/**
 * Values read at scrape time from several sources (one per running service instance: tests run more
 * than one in a process). A source returns undefined when it has nothing to say; a source that fails
 * or takes longer than 2 s is skipped rather than failing the scrape.
 */
export class SampledValues<T> {
  private readonly sources = new Set<() => Promise<T | undefined>>();

  /** `now`: epoch ms, Date.now unless a test moves time itself. */
  constructor(private readonly now: () => number = Date.now) {}

  /** Adds a source; the returned function removes it (on stop). */
  add(source: () => Promise<T | undefined>): () => void {
    this.sources.add(source);
    return () => void this.sources.delete(source);
  }

  /** The values of every source; one read serves the gauges of one scrape (shared for 1 s). */
  read(): Promise<T[]> {
    const now = this.now();
    if (this.last && now - this.last.at < 1_000) return this.last.values;
    const values = Promise.all([...this.sources].map((s) => withTimeout(s(), 2_000).catch(() => undefined))).then((all) =>
      all.filter((v): v is Awaited<T> => v !== undefined),
    ) as Promise<T[]>;
    this.last = { at: now, values };
    return values;
  }

  private last: { at: number; values: Promise<T[]> } | undefined;
}

/** The outbox of each running crm-records: unsent rows and the age of the oldest. */
export const outboxBacklog = new SampledValues<{ unsent: number; oldestAgeSeconds: number }>();
/** Due retries in each running webhook-delivery's database. */
export const deliveryBacklog = new SampledValues<{ retriesDue: number }>();
/** Attempts held by each running webhook-delivery's executor. */
export const deliveryLoad = new SampledValues<{ inFlight: number; busiestBusiness: number; businessesAtCap: number }>();

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms`)), ms);
    timer.unref();
    promise.then(
      (v) => {
        clearTimeout(timer);
        resolve(v);
      },
      (e: unknown) => {
        clearTimeout(timer);
        reject(e);
      },
    );
  });
}
