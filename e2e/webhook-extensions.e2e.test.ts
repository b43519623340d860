// Extensions §E1.1-§E1.3 through the gateway, in both run modes, with the typed client (@crm/client):
// rotation with an overlap window, bulk recovery of failed deliveries, endpoint health and
// auto-disable. Every answer is checked against the served OpenAPI document.
import { createHmac, randomUUID, timingSafeEqual } from "node:crypto";
import { rmSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { createCrmClient, type CrmClient } from "@crm/client";
import { describeDistributed, waitFor } from "@crm/testing";
import { verifyInterfaceSignature } from "@crm/testing";
import { validatingFetch } from "./flow";
import { startDistributed, startEmbedded, type RunningProduct } from "./harness";
import { OpenApiResponseValidator } from "./openapi-validator";

jest.setTimeout(240_000);

/** Short retries so a test sees the whole schedule (decisions §1: timings shortened by configuration only). */
const FAST_RETRIES = { WEBHOOK_RETRY_DELAYS_MS: "300,300", WEBHOOK_RETRY_INTERVAL_MS: "100", WEBHOOK_TIMEOUT_MS: "2000", RATE_LIMIT_MAX: "100000" };

interface Received {
  path: string;
  headers: http.IncomingHttpHeaders;
  rawBody: string;
}

/** A loopback receiver whose answer is chosen per request (by path), recording every request. */
async function startReceiver(): Promise<{
  base: string;
  received: Received[];
  answer: (path: string) => number;
  setAnswer(f: (path: string) => number): void;
  close(): Promise<void>;
}> {
  const state = { answer: (_path: string) => 200 };
  const received: Received[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const r = { path: req.url ?? "", headers: req.headers, rawBody: Buffer.concat(chunks).toString("utf8") };
      received.push(r);
      res.writeHead(state.answer(r.path), { "content-type": "text/plain" }).end("answer");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    received,
    answer: (p) => state.answer(p),
    setAnswer: (f) => {
      state.answer = f;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Standard Webhooks verification, written from its specification: any of the space-separated v1 signatures. */
function standardVerifies(secret: string, r: Received): boolean {
  const key = Buffer.from(secret.slice("whsec_".length), "base64");
  const expected = Buffer.from(createHmac("sha256", key).update(`${r.headers["webhook-id"]}.${r.headers["webhook-timestamp"]}.${r.rawBody}`).digest("base64"));
  return String(r.headers["webhook-signature"])
    .split(" ")
    .some((sig) => {
      const given = Buffer.from(sig.replace(/^v1,/, ""));
      return sig.startsWith("v1,") && given.length === expected.length && timingSafeEqual(given, expected);
    });
}

function scenarios(mode: string, start: () => Promise<RunningProduct & { dataDir?: string }>): void {
  let product: RunningProduct & { dataDir?: string };
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  const undocumented: string[] = [];
  let validator: OpenApiResponseValidator;

  beforeAll(async () => {
    [product, receiver] = await Promise.all([start(), startReceiver()]);
    validator = new OpenApiResponseValidator((await (await fetch(`${product.baseUrl}/api/v1/openapi.json`)).json()) as Record<string, unknown>);
  });
  afterAll(async () => {
    await receiver?.close();
    await product?.stop();
    if (product?.dataDir) rmSync(product.dataDir, { recursive: true, force: true });
  });
  afterEach(() => {
    expect(undocumented.splice(0)).toEqual([]);
  });

  /** A fresh business, signed in, behind the typed client. */
  async function owner(): Promise<{ api: CrmClient; businessId: string; accessToken: string }> {
    const fetchAndValidate = validatingFetch(validator, undocumented);
    const suffix = `${mode}-${randomUUID().slice(0, 8)}`;
    const signUp = await createCrmClient({ baseUrl: product.baseUrl, fetch: fetchAndValidate }).POST("/api/v1/auth/sign-up", {
      body: { businessName: `Business ${suffix}`, email: `owner-${suffix}@example.test`, password: "correct-horse-battery" },
    });
    if (!signUp.data) throw new Error(`sign-up failed: ${signUp.response.status}`);
    const { accessToken } = signUp.data.data;
    return { api: createCrmClient({ baseUrl: product.baseUrl, accessToken, fetch: fetchAndValidate }), businessId: signUp.data.data.business.id, accessToken };
  }

  const requestsTo = (path: string) => receiver.received.filter((r) => r.path === path);

  it("E1.1: a delivery retried during rotation's grace period carries both signatures, new first, then old", async () => {
    const { api } = await owner();
    const path = `/rotation-${randomUUID()}`;
    let down = true;
    const previous = receiver.answer;
    receiver.setAnswer((p) => (p === path ? (down ? 503 : 200) : previous(p)));
    const hook = (await api.POST("/api/v1/webhook", { body: { url: `${receiver.base}${path}`, events: ["client.created"] } })).data!.data;
    await api.POST("/api/v1/client", { body: { firstName: "Zoë", lastName: "東京 ✓" } });
    // Deterministic whatever the machine's speed: the delivery has used its automatic attempts
    // (signed with the old secret) before the rotation, and is retried by hand during the grace period.
    const delivery = await waitFor(async () => {
      const log = await api.GET("/api/v1/webhook/{id}/deliveries", { params: { path: { id: hook.id } } });
      return log.data?.data[0]?.status === "FAILED" ? log.data.data[0] : undefined;
    }, 30_000);
    const failed = requestsTo(path)[0]!;
    expect(standardVerifies(hook.secret, failed)).toBe(true);

    const rotation = await api.POST("/api/v1/webhook/{id}/rotate-secret", { params: { path: { id: hook.id } }, body: { gracePeriodSeconds: 3600 } });
    expect(rotation.response.status).toBe(200);
    const rotated = rotation.data!.data;
    expect(Date.parse(rotated.previousSecretExpiresAt!)).toBeGreaterThan(Date.now() + 3_500_000);
    down = false;
    const retried = await api.POST("/api/v1/webhook/{id}/deliveries/{deliveryId}/retry", { params: { path: { id: hook.id, deliveryId: delivery.id } } });
    expect(retried.response.status).toBe(202);

    const retry = await waitFor(() => requestsTo(path)[3], 30_000);
    expect(retry.rawBody).toBe(failed.rawBody);
    const [newer, older] = String(retry.headers["webhook-signature"]).split(" ");
    expect(standardVerifies(rotated.secret, { ...retry, headers: { ...retry.headers, "webhook-signature": newer } })).toBe(true);
    expect(standardVerifies(hook.secret, { ...retry, headers: { ...retry.headers, "webhook-signature": older } })).toBe(true);
    expect(verifyInterfaceSignature(rotated.secret, retry.rawBody, retry.headers["x-service-signature"] as string)).toBe(true);

    // Without a body: no overlap, the previous grace period ends too.
    const plain = await api.POST("/api/v1/webhook/{id}/rotate-secret", { params: { path: { id: hook.id } } });
    expect(plain.data!.data.previousSecretExpiresAt).toBeNull();
    const invalid = await api.POST("/api/v1/webhook/{id}/rotate-secret", { params: { path: { id: hook.id } }, body: { gracePeriodSeconds: 604_801 } });
    expect([invalid.response.status, invalid.error?.error.code]).toEqual([400, 400001]);
  });

  it("E1.2: recover re-sends the webhook's FAILED deliveries once, and no other business can touch them", async () => {
    const { api } = await owner();
    const path = `/recover-${randomUUID()}`;
    let down = true;
    const previous = receiver.answer;
    receiver.setAnswer((p) => (p === path ? (down ? 500 : 200) : previous(p)));
    const hook = (await api.POST("/api/v1/webhook", { body: { url: `${receiver.base}${path}`, events: ["client.created"] } })).data!.data;
    await api.POST("/api/v1/client", { body: { firstName: "Ada", lastName: "Lovelace" } });
    const failed = await waitFor(async () => {
      const log = await api.GET("/api/v1/webhook/{id}/deliveries", { params: { path: { id: hook.id } } });
      return log.data?.data[0]?.status === "FAILED" ? log.data.data[0] : undefined;
    }, 30_000);
    expect(failed.attempt).toBe(3);
    down = false;

    const since = new Date(Date.now() - 3_600_000).toISOString();
    const stranger = await owner();
    const denied = await stranger.api.POST("/api/v1/webhook/{id}/recover", { params: { path: { id: hook.id } }, body: { since } });
    expect([denied.response.status, denied.error?.error.code]).toEqual([404, 404001]);
    const tooWide = await api.POST("/api/v1/webhook/{id}/recover", { params: { path: { id: hook.id } }, body: { since: new Date(Date.now() - 15 * 86_400_000).toISOString() } });
    expect([tooWide.response.status, tooWide.error?.error.code]).toEqual([400, 400001]);

    const recovered = await api.POST("/api/v1/webhook/{id}/recover", { params: { path: { id: hook.id } }, body: { since } });
    expect(recovered.response.status).toBe(202);
    expect(recovered.data!.data).toEqual({ recovered: 1, remaining: 0 });
    const done = await waitFor(async () => {
      const log = await api.GET("/api/v1/webhook/{id}/deliveries", { params: { path: { id: hook.id } } });
      return log.data?.data[0]?.status === "SUCCESS" ? log.data.data[0] : undefined;
    }, 30_000);
    expect(done).toMatchObject({ id: failed.id, attempt: 4, responseStatus: 200 });
    const sent = requestsTo(path);
    expect(sent).toHaveLength(4);
    expect(new Set(sent.map((r) => r.headers["x-service-delivery-id"]))).toEqual(new Set([failed.id]));
    expect(new Set(sent.map((r) => r.rawBody)).size).toBe(1);

    await api.DELETE("/api/v1/webhook/{id}", { params: { path: { id: hook.id } } });
    const inactive = await api.POST("/api/v1/webhook/{id}/recover", { params: { path: { id: hook.id } }, body: { since } });
    expect([inactive.response.status, inactive.error?.error.code]).toEqual([409, 409004]);
  });

  it("E1.3: health fields, auto-disable after consecutive failures, and a re-enable that resets them", async () => {
    const { api } = await owner();
    const path = `/health-${randomUUID()}`;
    let down = true;
    const previous = receiver.answer;
    receiver.setAnswer((p) => (p === path ? (down ? 502 : 200) : previous(p)));
    const created = await api.POST("/api/v1/webhook", { body: { url: `${receiver.base}${path}`, events: ["client.created"], autoDisableAfter: 3 } });
    const hook = created.data!.data;
    expect(hook).toMatchObject({ autoDisableAfter: 3, consecutiveFailures: 0, lastSuccessAt: null, lastFailureAt: null, disabledReason: null });
    const invalid = await api.PUT("/api/v1/webhook/{id}", { params: { path: { id: hook.id } }, body: { autoDisableAfter: 0 } });
    expect([invalid.response.status, invalid.error?.error.code]).toEqual([400, 400001]);

    // One event: attempts 1, 2 and 3 fail; the third reaches autoDisableAfter.
    await api.POST("/api/v1/client", { body: { firstName: "Ada", lastName: "Lovelace" } });
    const disabled = await waitFor(async () => {
      const res = await api.GET("/api/v1/webhook/{id}", { params: { path: { id: hook.id } } });
      return res.data?.data.isActive === false ? res.data.data : undefined;
    }, 30_000);
    expect(disabled).toMatchObject({ consecutiveFailures: 3, disabledReason: "consecutive_failures" });
    expect(disabled.lastFailureAt).not.toBeNull();
    expect(requestsTo(path)).toHaveLength(3);

    down = false;
    const enabled = await api.PUT("/api/v1/webhook/{id}", { params: { path: { id: hook.id } }, body: { isActive: true } });
    expect(enabled.data!.data).toMatchObject({ isActive: true, consecutiveFailures: 0, disabledReason: null });
    await api.POST("/api/v1/client", { body: { firstName: "Grace", lastName: "Hopper" } });
    const healthy = await waitFor(async () => {
      const res = await api.GET("/api/v1/webhook/{id}", { params: { path: { id: hook.id } } });
      return res.data?.data.lastSuccessAt ? res.data.data : undefined;
    }, 30_000);
    expect(healthy).toMatchObject({ isActive: true, consecutiveFailures: 0, disabledReason: null });
  });
}

describe("webhook extensions, single-machine mode", () => {
  scenarios("embedded", () => startEmbedded(FAST_RETRIES));
});

describeDistributed("webhook extensions, distributed mode", () => {
  scenarios("distributed", () => startDistributed(FAST_RETRIES));
});
