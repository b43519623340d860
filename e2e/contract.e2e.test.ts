// The contract over HTTP, through the gateway, in single-machine mode: one test per rule family,
// each response also checked against the served OpenAPI document.
import { randomUUID } from "node:crypto";
import { startReceiver } from "./harness";
import { validatedEmbeddedProduct } from "./validated-product";
import { verifyInterfaceSignature } from "@crm/testing";
import { waitFor } from "@crm/testing";

jest.setTimeout(120_000);

const suite = validatedEmbeddedProduct({ RATE_LIMIT_MAX: "100000", CORS_ALLOWED_ORIGINS: "https://app.example" });
const { api, owner } = suite;

describe("sessions", () => {
  it("signs in case-insensitively, refreshes with rotation, detects reuse, and logs out", async () => {
    const a = await owner();
    const email = `owner-${a.businessId}@x`;
    void email;
    const me = await a.call("GET", "/api/v1/auth/me");
    expect(me.body.data).toMatchObject({ authType: "jwt", business: { id: a.businessId } });
    const first = a.cookie("refreshToken")!;
    const refreshed = await a.call("POST", "/api/v1/auth/token/refresh");
    expect(refreshed.status).toBe(200);
    expect(typeof refreshed.body.data.accessToken).toBe("string");
    expect(a.cookie("refreshToken")).not.toBe(first);

    const thief = api();
    const reuse = await thief.call("POST", "/api/v1/auth/token/refresh", undefined, { cookie: `refreshToken=${first}` });
    expect([reuse.status, reuse.body.error.code]).toEqual([401, 401013]);
    // Reuse revoked the whole session: the rotated token is gone too.
    const after = await a.call("POST", "/api/v1/auth/token/refresh");
    expect(after.body.error.code).toBe(401012);
  });

  it("logout answers 204 with no body and invalidates both tokens", async () => {
    const a = await owner();
    const token = a.accessToken!;
    const cookie = a.cookie("refreshToken")!;
    const out = await a.call("POST", "/api/v1/auth/logout");
    expect(out.status).toBe(204);
    expect(out.text).toBe("");
    const reused = await api().call("GET", "/api/v1/client", undefined, { authorization: `Bearer ${token}` });
    expect(reused.body.error.code).toBe(401011);
    const refresh = await api().call("POST", "/api/v1/auth/token/refresh", undefined, { cookie: `refreshToken=${cookie}` });
    expect(refresh.body.error.code).toBe(401012);
  });

  it("answers wrong email and wrong password identically", async () => {
    const a = await owner();
    const wrongPassword = await api().call("POST", "/api/v1/auth/sign-in", { email: (await a.call("GET", "/api/v1/auth/me")).body.data.user.email, password: "not-the-password" });
    const wrongEmail = await api().call("POST", "/api/v1/auth/sign-in", { email: "nobody@example.test", password: "not-the-password" });
    expect(wrongPassword.body).toEqual({ success: false, error: { code: 401001, message: "Invalid credentials" } });
    expect(wrongEmail.body).toEqual(wrongPassword.body);
  });
});

describe("API keys", () => {
  it("creates once-shown svc_ keys, scopes them, and revokes them at once", async () => {
    const a = await owner();
    const created = await a.call("POST", "/api/v1/api-key", { name: "sync", scopes: ["clients.read"] });
    expect(created.status).toBe(201);
    const key: string = created.body.data.key;
    expect(key).toMatch(/^svc_[A-Za-z0-9]{40}$/);
    expect(created.body.data.keyPrefix).toBe(key.slice(0, 12));
    const listed = await a.call("GET", "/api/v1/api-key");
    expect(JSON.stringify(listed.body)).not.toContain(key);

    const withKey = api();
    withKey.apiKey = key;
    expect((await withKey.call("GET", "/api/v1/client")).status).toBe(200);
    expect((await withKey.call("POST", "/api/v1/client", { firstName: "a", lastName: "b" })).body.error.code).toBe(401014);
    expect((await withKey.call("POST", "/api/v1/api-key", { name: "x" })).body.error.code).toBe(401014);
    expect((await api().call("GET", "/api/v1/client", undefined, { authorization: `Bearer ${key}` })).status).toBe(200);

    const revoked = await a.call("DELETE", "/api/v1/api-key", { id: created.body.data.id });
    expect([revoked.status, revoked.body.data.isActive]).toEqual([200, false]);
    expect((await withKey.call("GET", "/api/v1/client")).body.error.code).toBe(401021);
    expect((await api().call("GET", "/api/v1/client", undefined, { "x-api-key": "svc_" + "x".repeat(40) })).body.error.code).toBe(401022);
  });

  it("a key scoped to users.read + users.update cannot take over the OWNER (issue 16 item 1)", async () => {
    const a = api();
    const { email, password } = await a.signUp(randomUUID().slice(0, 8));
    const ownerId: string = (await a.call("GET", "/api/v1/auth/me")).body.data.user.id;
    const created = await a.call("POST", "/api/v1/api-key", { name: "user sync", scopes: ["users.read", "users.update"] });
    expect(created.status).toBe(201);
    const withKey = api();
    withKey.apiKey = created.body.data.key;
    const takeover = await withKey.call("PATCH", `/api/v1/user/${ownerId}`, { password: "taken-over-password" });
    expect([takeover.status, takeover.body]).toEqual([401, { success: false, error: { code: 401014, message: "Insufficient permissions for this action" } }]);
    expect((await api().call("POST", "/api/v1/auth/sign-in", { email, password: "taken-over-password" })).body.error.code).toBe(401001);
    expect((await api().call("POST", "/api/v1/auth/sign-in", { email, password })).status).toBe(200);
  });

  it("rejects past expiry dates and scopes beyond the creator's", async () => {
    const a = await owner();
    const past = await a.call("POST", "/api/v1/api-key", { name: "old", expiresAt: "2000-01-01T00:00:00.000Z" });
    expect([past.status, past.body.error.code]).toEqual([400, 400001]);
    const bogus = await a.call("POST", "/api/v1/api-key", { name: "bad", scopes: ["clients.fly"] });
    expect(bogus.body.error.code).toBe(400001);
  });
});

describe("records through the gateway", () => {
  it("creates, reads, updates and deletes with tenancy enforced", async () => {
    const a = await owner();
    const b = await owner();
    const created = await a.call("POST", "/api/v1/client", { firstName: "Ada", lastName: "Lovelace", email: "ada@example.test" });
    expect(created.status).toBe(201);
    const id = created.body.data.id;
    expect(created.body.data.businessId).toBe(a.businessId);
    expect((await a.call("GET", `/api/v1/client/${id}`)).body.data.contacts).toEqual([]);
    expect((await a.call("PATCH", `/api/v1/client/${id}`, { phone: "+44 20" })).body.data.phone).toBe("+44 20");
    expect((await a.call("PUT", `/api/v1/client/${id}`, { isActive: false })).body.data.isActive).toBe(false);

    for (const [method, body] of [["GET"], ["PATCH", { phone: "1" }], ["DELETE"]] as const) {
      const res = await b.call(method, `/api/v1/client/${id}`, body);
      expect([res.status, res.body.error.code]).toEqual([404, 404001]);
    }
    expect((await b.call("GET", "/api/v1/client")).body.meta.total).toBe(0);
    const foreign = await b.call("POST", "/api/v1/invoice", { clientId: id, items: [{ description: "x", quantity: 1, unitPrice: 1 }] });
    expect([foreign.status, foreign.body.error.details[0].path]).toEqual([400, "clientId"]);

    const deleted = await a.call("DELETE", `/api/v1/client/${id}`);
    expect([deleted.status, deleted.body.data.id]).toEqual([200, id]);
    expect((await a.call("GET", `/api/v1/client/${id}`)).status).toBe(404);
  });

  it("computes invoice totals exactly and numbers invoices per business", async () => {
    const a = await owner();
    const client = (await a.call("POST", "/api/v1/client", { firstName: "A", lastName: "B" })).body.data;
    const inv = await a.call("POST", "/api/v1/invoice", { clientId: client.id, items: [{ description: "x", quantity: 3, unitPrice: 0.335 }] });
    expect(inv.body.data).toMatchObject({ number: "INV-000001", totalAmount: 1.01, status: "DRAFT" });
    const readOnly = await a.call("POST", "/api/v1/invoice", { clientId: client.id, totalAmount: 5, items: [{ description: "x", quantity: 1, unitPrice: 1 }] });
    expect(readOnly.body.error.code).toBe(400001);
    const paid = await a.call("PATCH", `/api/v1/invoice/${inv.body.data.id}`, { status: "PAID" });
    expect(paid.body.data.status).toBe("PAID");
    const filtered = await a.call("GET", "/api/v1/invoice?where=status:PAID,totalAmount:gte:1&orderBy=createdAt:desc");
    expect(filtered.body.meta.total).toBe(1);
    expect((await a.call("DELETE", `/api/v1/client/${client.id}`)).body.error.code).toBe(409003);
  });

  it("paginates with the meta of interface §2 and rejects bad list parameters", async () => {
    const a = await owner();
    for (let i = 0; i < 23; i++) await a.call("POST", "/api/v1/product", { name: `P${i}` });
    const page = async (n: number) => (await a.call("GET", `/api/v1/product?page=${n}&perPage=10`)).body;
    expect((await page(1)).meta).toEqual({ total: 23, lastPage: 3, currentPage: 1, perPage: 10, prev: null, next: 2, nextCursor: expect.any(String) });
    expect((await page(3)).data).toHaveLength(3);
    expect((await page(4)).data).toEqual([]);
    expect((await page(4)).meta).toMatchObject({ prev: 3, next: null });
    expect((await a.call("GET", "/api/v1/product?perPage=500")).body.meta.perPage).toBe(100);
    expect((await a.call("GET", "/api/v1/product?orderBy=name:sideways")).body.error.code).toBe(400011);
    expect((await a.call("GET", "/api/v1/client?include=nothing")).body.error.code).toBe(400019);
    expect((await a.call("GET", "/api/v1/product?where=name:startsWith:p1")).body.meta.total).toBe(11);
  });

  it("replays a POST with the same Idempotency-Key and refuses a different body", async () => {
    const a = await owner();
    const headers = { "idempotency-key": randomUUID() };
    const first = await a.call("POST", "/api/v1/employee", { firstName: "E", lastName: "One" }, headers);
    const second = await a.call("POST", "/api/v1/employee", { firstName: "E", lastName: "One" }, headers);
    expect([first.status, second.status]).toEqual([201, 201]);
    expect(second.body.data.id).toBe(first.body.data.id);
    expect((await a.call("GET", "/api/v1/employee")).body.meta.total).toBe(1);
    const other = await a.call("POST", "/api/v1/employee", { firstName: "E", lastName: "Two" }, headers);
    expect([other.status, other.body.error.code]).toEqual([409, 409002]);
  });
});

describe("webhooks through the gateway", () => {
  it("creates, tests, disables and signs deliveries of subscribed events only", async () => {
    const a = await owner();
    // The witness: see the disabled webhook's check below.
    const [receiver, witness] = await Promise.all([startReceiver(200), startReceiver(200)]);
    try {
      const hook = await a.call("POST", "/api/v1/webhook", { url: receiver.url, events: ["product.created", "product.deleted"] });
      expect(hook.status).toBe(201);
      expect(hook.body.data.secret).toMatch(/^whsec_/);
      expect(hook.body.data.secretPrefix).toBe(hook.body.data.secret.slice(0, hook.body.data.secretPrefix.length));
      const read = await a.call("GET", `/api/v1/webhook/${hook.body.data.id}`);
      expect(read.body.data.secret).toBeUndefined();

      const test = await a.call("POST", `/api/v1/webhook/${hook.body.data.id}/test`);
      expect(test.status).toBe(201);
      expect(test.body.data).toMatchObject({ event: "webhook.test", status: "PENDING", attempt: 0, nextRetryAt: null });

      await a.call("POST", "/api/v1/employee", { firstName: "not", lastName: "subscribed" });
      const product = (await a.call("POST", "/api/v1/product", { name: "Widget" })).body.data;
      const got = await waitFor(() => receiver.received.find((r) => r.headers["x-service-event"] === "product.created"), 20_000);
      expect(verifyInterfaceSignature(hook.body.data.secret, got.rawBody, got.headers["x-service-signature"] as string)).toBe(true);
      expect(JSON.parse(got.rawBody).data.id).toBe(product.id);

      // A second, active webhook on the same event is the witness that the deletion was handled:
      // deliveries for every webhook an event reaches are made together, so once the witness has its
      // delivery, the disabled webhook would have had one too.
      expect((await a.call("POST", "/api/v1/webhook", { url: witness.url, events: ["product.deleted"] })).status).toBe(201);
      const off = await a.call("DELETE", `/api/v1/webhook/${hook.body.data.id}`);
      expect([off.status, off.body.data.isActive]).toEqual([200, false]);
      await a.call("DELETE", `/api/v1/product/${product.id}`);
      await waitFor(() => witness.received.find((r) => r.headers["x-service-event"] === "product.deleted"), 20_000);
      expect(receiver.received.map((r) => r.headers["x-service-event"])).toEqual(["product.created"]);
      const log = await a.call("GET", `/api/v1/webhook/${hook.body.data.id}/deliveries`);
      expect(log.body.meta.total).toBe(2);
      expect(log.body.data.map((d: { event: string }) => d.event)).toEqual(["product.created", "webhook.test"]);
    } finally {
      await Promise.all([receiver.close(), witness.close()]);
    }
  });
});

describe("the edge", () => {
  it("applies CORS per credential type and refuses Origin: null except on capabilities", async () => {
    const a = await owner();
    const allowed = await a.call("GET", "/api/v1/client", undefined, { origin: "https://app.example" });
    expect(allowed.headers.get("access-control-allow-origin")).toBe("https://app.example");
    expect(allowed.headers.get("access-control-allow-credentials")).toBe("true");
    const other = await a.call("GET", "/api/v1/client", undefined, { origin: "https://evil.example" });
    expect(other.headers.get("access-control-allow-origin")).toBeNull();
    const caps = await api().call("GET", "/api/v1/capabilities", undefined, { origin: "null" });
    expect([caps.status, caps.headers.get("access-control-allow-origin"), caps.headers.get("access-control-allow-credentials")]).toEqual([200, "*", null]);
    expect(caps.body.data).toMatchObject({ entities: expect.any(Array), events: expect.arrayContaining(["client.created", "contact.deleted"]) });
    const refused = await a.call("GET", "/api/v1/client", undefined, { origin: "null" });
    expect([refused.status, refused.body.error.code]).toEqual([403, 403000]);
  });

  it("carries request ids and rate-limit headers on every response", async () => {
    const res = await api().call("GET", "/api/v1/nothing-here");
    expect([res.status, res.body.error.code]).toEqual([404, 404000]);
    expect(res.headers.get("x-request-id")).toBeTruthy();
    expect(res.headers.get("x-ratelimit-limit")).toBe("100000");
    expect(Number(res.headers.get("x-ratelimit-reset"))).toBeGreaterThan(Date.now() / 1000);
  });
});
