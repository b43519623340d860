// Tracing with OpenTelemetry's API and an OTLP/HTTP exporter, loaded only when
// OTEL_EXPORTER_OTLP_ENDPOINT is set. Unset, nothing of OpenTelemetry is even required: every
// helper here returns undefined after one variable check, so the product pays no memory, no
// context propagation (AsyncLocalStorage) and no per-request work for tracing it does not do.
// Only the W3C `traceparent` a client sent is passed on through the HTTP hops, as a header, so a
// trace started upstream is not cut at the gateway.
import type * as OtelApi from "@opentelemetry/api";

export interface TracingOptions {
  /** OTEL_EXPORTER_OTLP_ENDPOINT: base URL of an OTLP/HTTP receiver; spans go to `<endpoint>/v1/traces`. */
  endpoint: string | undefined;
  /** OTel `service.name` of this process ("crm-platform" for the single process). */
  serviceName: string;
  /** OTEL_BSP_SCHEDULE_DELAY: longest a finished span waits before it is exported (ms). */
  exportDelayMs?: number;
}

interface Otel {
  api: typeof OtelApi;
  tracers: Map<string, OtelApi.Tracer>;
  shutdown(): Promise<void>;
  flush(): Promise<void>;
}

let otel: Otel | undefined;

/**
 * Starts tracing for this process when an endpoint is given (once: later calls, e.g. the other
 * services of the single process, share it). Returns whether tracing is on.
 */
export function startTracing(options: TracingOptions): boolean {
  if (otel) return true;
  if (!options.endpoint) return false;
  /* eslint-disable @typescript-eslint/no-require-imports -- loaded only when tracing is on */
  const api = require("@opentelemetry/api") as typeof OtelApi;
  const { TracerProvider, BatchSpanProcessor } = require("@opentelemetry/sdk-trace") as typeof import("@opentelemetry/sdk-trace");
  const { OTLPTraceExporter } = require("@opentelemetry/exporter-trace-otlp-http") as typeof import("@opentelemetry/exporter-trace-otlp-http");
  const { AsyncLocalStorageContextManager } = require("@opentelemetry/context-async-hooks") as typeof import("@opentelemetry/context-async-hooks");
  const { W3CTraceContextPropagator } = require("@opentelemetry/core") as typeof import("@opentelemetry/core");
  const { resourceFromAttributes } = require("@opentelemetry/resources") as typeof import("@opentelemetry/resources");
  /* eslint-enable @typescript-eslint/no-require-imports */
  const exporter = new OTLPTraceExporter({ url: `${options.endpoint.replace(/\/+$/, "")}/v1/traces` });
  const provider = new TracerProvider({
    resource: resourceFromAttributes({ "service.name": options.serviceName }),
    spanProcessors: [new BatchSpanProcessor({ exporter, scheduledDelayMillis: options.exportDelayMs ?? 5_000 })],
  });
  api.context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  api.propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  api.trace.setGlobalTracerProvider(provider);
  otel = {
    api,
    tracers: new Map(),
    flush: () => provider.forceFlush(),
    shutdown: async () => {
      await provider.shutdown();
      api.trace.disable();
      api.context.disable();
      api.propagation.disable();
    },
  };
  return true;
}

/** Whether this process traces. */
export function tracingEnabled(): boolean {
  return otel !== undefined;
}

/** Exports every finished span now (tests, shutdown). */
export async function flushTracing(): Promise<void> {
  await otel?.flush();
}

/** Flushes and stops tracing (tests start it again with another endpoint). */
export async function stopTracing(): Promise<void> {
  const current = otel;
  otel = undefined;
  await current?.shutdown();
}

export type SpanKind = "server" | "client" | "producer" | "consumer" | "internal";

/** Where a span's parent comes from: W3C headers (`traceparent`, `tracestate`), or the active span. */
export type TraceCarrier = Readonly<Record<string, string | string[] | undefined>>;

/** A started span and the context it heads. */
export interface TraceSpan {
  readonly traceId: string;
  /** Runs `fn` with this span active: spans started and headers injected inside are its children. */
  run<T>(fn: () => T): T;
  setAttribute(name: string, value: string | number | boolean): void;
  /** Renames the span (an HTTP server span learns its route template once routed). */
  setName(name: string): void;
  /** Marks the span failed (an error, or an answer that is one). */
  fail(message?: string): void;
  end(): void;
  /** `traceparent` (and `tracestate`) naming this span as the parent, for a message or a request. */
  headers(): Record<string, string>;
}

/**
 * Starts a span of `service` (the tracer's name: which of the four services, also in the single
 * process) as a child of the W3C context in `parent` (a new trace when it holds none), or of the
 * active span when no `parent` is given. Undefined when tracing is off.
 */
export function startSpan(
  service: string,
  name: string,
  options: { kind: SpanKind; parent?: TraceCarrier; attributes?: Record<string, string | number | boolean> },
): TraceSpan | undefined {
  if (!otel) return undefined;
  const { api } = otel;
  let tracer = otel.tracers.get(service);
  if (!tracer) otel.tracers.set(service, (tracer = api.trace.getTracer(service)));
  // Given headers decide alone: without a traceparent in them, the span starts a new trace.
  const parentContext = options.parent ? api.propagation.extract(api.ROOT_CONTEXT, options.parent, headerGetter) : api.context.active();
  const span = tracer.startSpan(name, { kind: KINDS[options.kind], attributes: { "crm.service": service, ...options.attributes } }, parentContext);
  const context = api.trace.setSpan(parentContext, span);
  return {
    traceId: span.spanContext().traceId,
    run: (fn) => api.context.with(context, fn),
    setAttribute: (key, value) => void span.setAttribute(key, value),
    setName: (value) => void span.updateName(value),
    fail: (message) => void span.setStatus({ code: api.SpanStatusCode.ERROR, ...(message ? { message } : {}) }),
    end: () => span.end(),
    headers: () => {
      const carrier: Record<string, string> = {};
      api.propagation.inject(context, carrier);
      return carrier;
    },
  };
}

/** `traceparent` (and `tracestate`) of the active span, for a request or a message; undefined when none. */
export function activeTraceHeaders(): Record<string, string> | undefined {
  if (!otel) return undefined;
  const carrier: Record<string, string> = {};
  otel.api.propagation.inject(otel.api.context.active(), carrier);
  return carrier.traceparent ? carrier : undefined;
}

/** Log fields of the active span (`traceId`, `spanId`), for a logger mixin; none when tracing is off. */
export function activeTraceLogFields(): Record<string, string> {
  // A new object each time: pino merges the line's own fields into it.
  if (!otel) return {};
  const span = otel.api.trace.getSpan(otel.api.context.active());
  if (!span) return {};
  const { traceId, spanId } = span.spanContext();
  return { traceId, spanId };
}

const TRACEPARENT = /^[0-9a-f]{2}-([0-9a-f]{32})-[0-9a-f]{16}-[0-9a-f]{2}$/;

/** The trace id of a valid W3C `traceparent` header value (tracing on or off), else undefined. */
export function traceIdOf(traceparent: string | undefined): string | undefined {
  if (traceparent === undefined || traceparent.length !== 55) return undefined;
  const match = TRACEPARENT.exec(traceparent);
  const traceId = match?.[1];
  return traceId && traceId !== "00000000000000000000000000000000" ? traceId : undefined;
}

const KINDS = { internal: 0, server: 1, client: 2, producer: 3, consumer: 4 } as const;

const headerGetter: OtelApi.TextMapGetter<TraceCarrier> = {
  keys: (carrier) => Object.keys(carrier),
  get: (carrier, key) => carrier[key] ?? carrier[key.toLowerCase()],
};
