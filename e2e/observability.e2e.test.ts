// Issue 14, from outside: after real traffic (a sign-up, a list, a write, a webhook delivered and one
// failing) the counters of every service moved as they should, in both run modes; and one trace,
// started by the client's own `traceparent` (continued because TRUST_TRACEPARENT is set; without it the
// edge starts a trace of its own, services/gateway/test/edge-headers.test.ts), spans gateway ->
// crm-records -> relay -> consumer -> attempt, received by an OTLP/HTTP receiver of the test's own.
import { randomBytes } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { describeDistributed, freePort, waitFor } from "@crm/testing";
import { startDistributed, startEmbedded, startReceiver } from "./harness";

jest.setTimeout(240_000);

interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes?: Array<{ key: string; value: { stringValue?: string } }>;
}

/** An OTLP/HTTP (JSON) trace receiver on loopback, keeping every span it is sent. */
async function startOtlpReceiver(): Promise<{ url: string; spans: OtlpSpan[]; close(): Promise<void> }> {
  const spans: OtlpSpan[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      if (req.url === "/v1/traces") {
        const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as {
          resourceSpans?: Array<{ scopeSpans?: Array<{ spans?: OtlpSpan[] }> }>;
        };
        for (const rs of body.resourceSpans ?? []) for (const ss of rs.scopeSpans ?? []) spans.push(...(ss.spans ?? []));
      }
      res.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    spans,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** Sum of the samples of `name` whose labels include `labels` (Prometheus text format). */
function sample(text: string, name: string, labels: Record<string, string> = {}): number {
  let total = 0;
  for (const line of text.split("\n")) {
    if (line.startsWith("#")) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const found: Record<string, string> = {};
    for (const pair of (match[3] ?? "").matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) found[pair[1]!] = pair[2]!;
    if (Object.entries(labels).every(([k, v]) => found[k] === v)) total += Number(match[4]);
  }
  return total;
}

async function scrape(url: string): Promise<string> {
  const res = await fetch(url);
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toContain("text/plain");
  return res.text();
}

async function call(baseUrl: string, method: string, path: string, token?: string, body?: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(`${baseUrl}/api/v1${path}`, {
    method,
    headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(body ? { "content-type": "application/json" } : {}), ...headers },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  const json = (await res.json()) as { data?: Record<string, unknown>; error?: unknown };
  return { status: res.status, data: json.data ?? {}, ...(json.error ? { error: json.error } : {}) };
}

interface Traffic {
  traceId: string;
  token: string;
}

/** The traffic of the issue: a sign-up, a webhook delivered and one failing, a write (traced by the client), a list. */
async function driveTraffic(baseUrl: string, good: string, bad: string): Promise<Traffic> {
  const suffix = randomBytes(4).toString("hex");
  const signUp = await call(baseUrl, "POST", "/auth/sign-up", undefined, {
    businessName: `Observed ${suffix}`,
    email: `ops-${suffix}@example.test`,
    password: "correct-horse-battery",
    firstName: "Ops",
  });
  expect(signUp.status).toBe(201);
  const token = String(signUp.data.accessToken);
  expect((await call(baseUrl, "POST", "/webhook", token, { url: good, events: ["client.created"] })).status).toBe(201);
  expect((await call(baseUrl, "POST", "/webhook", token, { url: bad, events: ["client.created"] })).status).toBe(201);
  const traceId = randomBytes(16).toString("hex");
  const traceparent = `00-${traceId}-${randomBytes(8).toString("hex")}-01`;
  const created = await call(baseUrl, "POST", "/client", token, { firstName: "Grace", lastName: "Hopper" }, { traceparent });
  expect(created).toMatchObject({ status: 201 });
  expect(await call(baseUrl, "GET", "/client", token)).toMatchObject({ status: 200 });
  return { traceId, token };
}

/** The spans of `traceId`, once the attempt's span has arrived (spans are exported in batches). */
async function traceOf(spans: OtlpSpan[], traceId: string): Promise<OtlpSpan[]> {
  const of = () => spans.filter((s) => s.traceId === traceId);
  await waitFor(() => of().filter((s) => s.name === "webhook attempt").length >= 2, 30_000, 100);
  return of();
}

/** One trace, each hop the child of the one before: gateway -> crm-records -> relay -> consumer -> attempts. */
function expectOneTraceThroughEveryHop(trace: OtlpSpan[]): void {
  const service = (s: OtlpSpan) => s.attributes?.find((a) => a.key === "crm.service")?.value.stringValue;
  const byId = new Map(trace.map((s) => [s.spanId, s]));
  const chain = (span: OtlpSpan): string[] => {
    const names: string[] = [];
    for (let s: OtlpSpan | undefined = span; s; s = s.parentSpanId ? byId.get(s.parentSpanId) : undefined) names.unshift(`${service(s)}: ${s.name}`);
    return names;
  };
  const attempts = trace.filter((s) => s.name === "webhook attempt");
  expect(attempts).toHaveLength(2);
  for (const attempt of attempts) {
    expect(chain(attempt)).toEqual([
      "gateway: POST /api/v1/client",
      "gateway: forward crm-records",
      "crm-records: POST /api/v1/client",
      "crm-records: publish crm.records.v1",
      "webhook-delivery: consume crm.records.v1",
      "webhook-delivery: webhook attempt",
    ]);
  }
}

/** What every run must show after `driveTraffic`, service by service (embedded: all in one text). */
function expectCountersMoved(texts: { gateway: string; identity: string; records: string; webhooks: string }): void {
  const { gateway, identity, records, webhooks } = texts;
  // HTTP, by route template (never a raw path), method and status class.
  expect(sample(gateway, "crm_http_requests_total", { service: "gateway", route: "/api/v1/client", method: "POST", status_class: "2xx" })).toBe(1);
  expect(sample(gateway, "crm_http_requests_total", { service: "gateway", route: "/api/v1/client", method: "GET", status_class: "2xx" })).toBe(1);
  expect(sample(records, "crm_http_requests_total", { service: "crm-records", route: "/api/v1/client", method: "POST", status_class: "2xx" })).toBe(1);
  expect(sample(records, "crm_http_request_duration_seconds_count", { service: "crm-records", route: "/api/v1/client", method: "GET" })).toBe(1);
  expect(sample(identity, "crm_http_requests_total", { service: "identity", route: "/api/v1/auth/sign-up", status_class: "2xx" })).toBe(1);
  expect(sample(webhooks, "crm_http_requests_total", { service: "webhook-delivery", route: "/api/v1/webhook", method: "POST", status_class: "2xx" })).toBe(2);
  expect(gateway).toMatch(/^crm_http_requests_in_flight\{service="gateway"\} /m);
  // Gateway: JWT authentications (two webhooks, a write, a list), upstream latency per service.
  expect(sample(gateway, "crm_gateway_authentications_total", { kind: "jwt", result: "ok" })).toBe(4);
  expect(sample(gateway, "crm_gateway_upstream_duration_seconds_count", { service: "crm-records", status_class: "2xx" })).toBe(2);
  expect(sample(gateway, "crm_gateway_upstream_errors_total")).toBe(0);
  // Outbox: the write's event published, nothing left behind.
  expect(sample(records, "crm_outbox_published_total")).toBeGreaterThanOrEqual(1);
  expect(sample(records, "crm_outbox_publish_batches_total")).toBeGreaterThanOrEqual(1);
  expect(sample(records, "crm_outbox_unsent_rows")).toBe(0);
  expect(sample(records, "crm_outbox_oldest_unsent_age_seconds")).toBe(0);
  expect(sample(records, "crm_outbox_dead_lettered_total")).toBe(0);
  // Consumer and delivery: one event handled, one attempt delivered and one refused by its receiver.
  expect(sample(webhooks, "crm_events_consumed_total", { topic: "crm.records.v1", type: "client.created" })).toBe(1);
  expect(sample(webhooks, "crm_event_handling_delay_seconds_count", { topic: "crm.records.v1" })).toBe(1);
  expect(sample(webhooks, "crm_event_handler_errors_total")).toBe(0);
  expect(sample(webhooks, "crm_webhook_attempts_total", { outcome: "success" })).toBe(1);
  expect(sample(webhooks, "crm_webhook_attempts_total", { outcome: "http_error" })).toBe(1);
  expect(sample(webhooks, "crm_webhook_attempt_duration_seconds_count")).toBe(2);
  expect(sample(webhooks, "crm_webhook_deliveries_finished_total", { state: "SUCCESS" })).toBe(1);
  expect(webhooks).toMatch(/^crm_webhook_retries_due 0$/m);
  expect(webhooks).toMatch(/^crm_webhook_attempts_in_flight \d+$/m);
  // Process metrics (Node's defaults).
  for (const text of Object.values(texts)) {
    expect(text).toMatch(/^process_resident_memory_bytes \d+/m);
    expect(text).toMatch(/^nodejs_eventloop_lag_seconds /m);
  }
}

/** Whether every expectation holds yet (the assertion itself then reports what did not). */
function settled(texts: Parameters<typeof expectCountersMoved>[0]): boolean {
  try {
    expectCountersMoved(texts);
    return true;
  } catch {
    return false;
  }
}

describe("metrics and traces, embedded (one process, one metrics endpoint)", () => {
  it("counts the traffic of every service on METRICS_PORT only, and traces a write to its webhook attempts", async () => {
    const otlp = await startOtlpReceiver();
    const good = await startReceiver(204);
    const bad = await startReceiver(500);
    const metricsPort = await freePort();
    const product = await startEmbedded({
      METRICS_PORT: String(metricsPort),
      OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url,
      OTEL_BSP_SCHEDULE_DELAY: "100",
      TRUST_TRACEPARENT: "true",
      LOG_LEVEL: "info",
    });
    try {
      const metricsUrl = `http://127.0.0.1:${metricsPort}/metrics`;
      // Never on the public API port.
      expect((await fetch(`${product.baseUrl}/metrics`)).status).toBe(404);
      const before = await scrape(metricsUrl);
      expect(sample(before, "crm_outbox_published_total")).toBe(0);

      const { traceId } = await driveTraffic(product.baseUrl, good.url, bad.url);
      // Counters settle at different moments (an outcome is recorded after its attempt is counted,
      // the outbox row marked sent after its event is handled): wait until all have, then assert.
      const read = async () => {
        const text = await scrape(metricsUrl);
        return { gateway: text, identity: text, records: text, webhooks: text };
      };
      await waitFor(async () => settled(await read()), 30_000, 200).catch(() => undefined);
      expectCountersMoved(await read());

      expectOneTraceThroughEveryHop(await traceOf(otlp.spans, traceId));
      // Logs keep the request id and gain the trace id.
      const line = product
        .logs()
        .split("\n")
        .find((l) => l.includes('"service":"crm-records"') && l.includes(`"traceId":"${traceId}"`) && l.includes('"requestId"'));
      expect(line).toBeDefined();
    } finally {
      await product.stop();
      await Promise.all([otlp.close(), good.close(), bad.close()]);
    }
  });
});

describeDistributed("metrics and traces, distributed (a process per service, Kafka)", () => {
  it("counts the traffic at each service's own GET /metrics, and traces a write across processes and Kafka", async () => {
    const otlp = await startOtlpReceiver();
    const good = await startReceiver(204);
    const bad = await startReceiver(500);
    const metricsPort = await freePort();
    const product = await startDistributed({
      METRICS_PORT: String(metricsPort),
      OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url,
      OTEL_BSP_SCHEDULE_DELAY: "100",
      TRUST_TRACEPARENT: "true",
    });
    try {
      const gatewayMetrics = `http://127.0.0.1:${metricsPort}/metrics`;
      expect((await fetch(`${product.baseUrl}/metrics`)).status).toBe(404);
      const { traceId } = await driveTraffic(product.baseUrl, good.url, bad.url).catch((err: unknown) => {
        throw new Error(`${String(err)}\n${product.logs().slice(-8000)}`);
      });
      const read = async () => ({
        gateway: await scrape(gatewayMetrics),
        identity: await scrape(`${product.services.identity.url}/metrics`),
        records: await scrape(`${product.services["crm-records"].url}/metrics`),
        webhooks: await scrape(`${product.services["webhook-delivery"].url}/metrics`),
      });
      await waitFor(async () => settled(await read()), 30_000, 200).catch(() => undefined);
      const texts = await read();
      expectCountersMoved(texts);
      // Each process exports what it runs: no outbox in the gateway, no gateway figures in a service.
      expect(texts.gateway).not.toContain("crm_outbox_");
      expect(texts.records).not.toContain("crm_gateway_");
      // Kafka exposes the consumer's lag.
      expect(texts.webhooks).toMatch(/^crm_event_consumer_lag_messages\{topic="crm.records.v1"\} \d+/m);

      expectOneTraceThroughEveryHop(await traceOf(otlp.spans, traceId));
    } finally {
      await product.stop();
      await Promise.all([otlp.close(), good.close(), bad.close()]);
    }
  });
});
