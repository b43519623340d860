// Issue 35 from outside, through the gateway of the single process (`pnpm start`), every answer checked
// against the OpenAPI document: the rules of docs/security.md that live in identity, the edge and the
// services' shared kit (items 2, 3, 4, 5, 6, 11 and 12).
import { randomUUID } from "node:crypto";
import { freePort, waitFor } from "@crm/testing";
import type { ApiClient } from "./api-client";
import { startReceiver } from "./harness";
import { validatedEmbeddedProduct } from "./validated-product";

jest.setTimeout(180_000);

let metricsPort = 0;
const suite = validatedEmbeddedProduct(async () => {
  metricsPort = await freePort();
  // A short hash queue: on a loaded machine a queued sign-in must still be answered well within the
  // gateway's UPSTREAM_TIMEOUT_MS (whose 503000 would be the edge's, not the queue's).
  return { RATE_LIMIT_MAX: "100000", METRICS_PORT: String(metricsPort), PASSWORD_HASH_QUEUE: "2" };
});
const { api, owner } = suite;

const PASSWORD = "correct-horse-battery";

/** A client signed in as a new user of `admin`'s business, with `role`. */
async function addUser(admin: ApiClient, role: string): Promise<{ client: ApiClient; id: string; email: string }> {
  const email = `${role.toLowerCase()}-${randomUUID()}@example.test`;
  const created = await admin.call("POST", "/api/v1/user", { email, password: PASSWORD, role });
  expect(created.status).toBe(201);
  const client = api();
  const signedIn = await client.call("POST", "/api/v1/auth/sign-in", { email, password: PASSWORD });
  expect(signedIn.status).toBe(200);
  client.accessToken = signedIn.body.data.accessToken;
  return { client, id: created.body.data.id, email };
}

/** A second session of the same user (another device). */
async function anotherSession(email: string, password = PASSWORD): Promise<ApiClient> {
  const client = api();
  const res = await client.call("POST", "/api/v1/auth/sign-in", { email, password });
  expect(res.status).toBe(200);
  client.accessToken = res.body.data.accessToken;
  return client;
}

describe("rule 2: only a signed-in user sets a password or an email", () => {
  it("an unscoped API key cannot create a user (401014), so it cannot become one", async () => {
    const a = await owner();
    const key = await a.call("POST", "/api/v1/api-key", { name: "everything" });
    const withKey = api();
    withKey.apiKey = key.body.data.key;
    const email = `planted-${randomUUID()}@example.test`;
    const planted = await withKey.call("POST", "/api/v1/user", { email, password: "a password I chose", role: "OWNER" });
    expect([planted.status, planted.body.error]).toEqual([401, { code: 401014, message: "Insufficient permissions for this action" }]);
    expect((await api().call("POST", "/api/v1/auth/sign-in", { email, password: "a password I chose" })).status).toBe(401);
    // Nor set another user's password or email; other fields it may still change.
    const member = await addUser(a, "MEMBER");
    expect((await withKey.call("PATCH", `/api/v1/user/${member.id}`, { password: "taken over password" })).body.error.code).toBe(401014);
    expect((await withKey.call("PATCH", `/api/v1/user/${member.id}`, { email: `x-${randomUUID()}@example.test` })).body.error.code).toBe(401014);
    expect((await withKey.call("PATCH", `/api/v1/user/${member.id}`, { firstName: "Renamed" })).status).toBe(200);
  });
});

describe("rule 3: one's own password or email", () => {
  it("a VIEWER changes their own name and password with a JWT; the password needs currentPassword and ends the other sessions", async () => {
    const a = await owner();
    const viewer = await addUser(a, "VIEWER");
    const self = `/api/v1/user/${viewer.id}`;
    expect((await viewer.client.call("PATCH", self, { firstName: "Vi", lastName: "Ewer" })).body.data).toMatchObject({ firstName: "Vi", lastName: "Ewer", role: "VIEWER" });
    expect((await viewer.client.call("PATCH", self, { role: "ADMIN" })).body.error.code).toBe(401014);
    const ownerId = (await a.call("GET", "/api/v1/auth/me")).body.data.user.id;
    expect((await viewer.client.call("PATCH", `/api/v1/user/${ownerId}`, { firstName: "X" })).body.error.code).toBe(401014);

    const other = await anotherSession(viewer.email);
    const missing = await viewer.client.call("PATCH", self, { password: "a stolen token's password" });
    expect([missing.status, missing.body.error.code, missing.body.error.details]).toEqual([400, 400001, [{ path: "currentPassword", message: expect.any(String) }]]);
    const wrong = await viewer.client.call("PATCH", self, { password: "a stolen token's password", currentPassword: "a guess" });
    expect([wrong.status, wrong.body.error]).toEqual([401, { code: 401001, message: "Invalid credentials" }]);
    expect((await viewer.client.call("PATCH", self, { password: "my new long password", currentPassword: PASSWORD })).status).toBe(200);
    expect((await viewer.client.call("GET", "/api/v1/auth/me")).status).toBe(200);
    expect((await other.call("GET", "/api/v1/auth/me")).body.error.code).toBe(401011);
    expect((await api().call("POST", "/api/v1/auth/sign-in", { email: viewer.email, password: "my new long password" })).status).toBe(200);
  });

  it("an administrator's new password for another user ends all of that user's sessions", async () => {
    const a = await owner();
    const member = await addUser(a, "MEMBER");
    expect((await a.call("PATCH", `/api/v1/user/${member.id}`, { password: "set by the owner" })).status).toBe(200);
    expect((await member.client.call("GET", "/api/v1/auth/me")).body.error.code).toBe(401011);
    expect((await a.call("GET", "/api/v1/auth/me")).status).toBe(200);
  });
});

describe("rule 4: an Idempotency-Key answers only the caller that used it", () => {
  it("a key scoped to webhooks.create reusing the owner's Idempotency-Key gets 409002, not the owner's whsec_ secret", async () => {
    const a = await owner();
    const scoped = api();
    scoped.apiKey = (await a.call("POST", "/api/v1/api-key", { name: "hooks", scopes: ["webhooks.create"] })).body.data.key;
    const headers = { "idempotency-key": `k-${randomUUID()}` };
    const body = { url: "https://example.com/hooks", events: ["client.created"] };
    const first = await a.call("POST", "/api/v1/webhook", body, headers);
    expect(first.status).toBe(201);
    const secret: string = first.body.data.secret;
    const reused = await scoped.call("POST", "/api/v1/webhook", body, headers);
    expect([reused.status, reused.body.error.code]).toEqual([409, 409002]);
    expect(reused.text).not.toContain(secret);
    expect(reused.headers.get("idempotent-replayed")).toBeNull();
    const replayed = await a.call("POST", "/api/v1/webhook", body, headers);
    expect([replayed.status, replayed.body.data.secret, replayed.headers.get("idempotent-replayed")]).toEqual([201, secret, "true"]);
    expect((await a.call("GET", "/api/v1/webhook")).body.data).toHaveLength(1);
  });
});

describe("rule 5: text the database cannot store", () => {
  it("a lone UTF-16 surrogate is 400001 naming the field (the issue's raw body), also unauthenticated and nested", async () => {
    const a = await owner();
    const surrogate = (path: string) => ({
      success: false,
      error: { code: 400001, message: "Validation failed", details: [{ path, message: "Must not contain a lone UTF-16 surrogate" }] },
    });
    // JSON.stringify writes a lone surrogate as the escape "\udc00": the raw body of the issue.
    const client = await a.call("POST", "/api/v1/client", { firstName: "a", lastName: "\udc00" });
    expect([client.status, client.body]).toEqual([400, surrogate("lastName")]);
    const signIn = await api().call("POST", "/api/v1/auth/sign-in", { email: "x\ud800@example.test", password: "pw" });
    expect([signIn.status, signIn.body]).toEqual([400, surrogate("email")]);
    const created = await a.call("POST", "/api/v1/client", { firstName: "Ada", lastName: "Lovelace" });
    const invoice = await a.call("POST", "/api/v1/invoice", {
      clientId: created.body.data.id,
      items: [{ description: "ok \ud83d\ude00" }, { description: "x\udfff", quantity: 1, unitPrice: 1 }],
    });
    expect([invoice.status, invoice.body.error?.details?.[0]?.path]).toEqual([400, "items.1.description"]);
    // A query string cannot carry one: percent-decoding turns bytes that are no UTF-8 into U+FFFD.
    const listed = await a.call("GET", "/api/v1/client?where=firstName:%ED%B0%80");
    expect([listed.status, listed.body.data]).toEqual([200, []]);
  });
});

describe("rule 6: caching", () => {
  it("authenticated answers are no-store; lists carry no ETag; a record's strong ETag and its 304 stay", async () => {
    const a = await owner();
    const created = await a.call("POST", "/api/v1/client", { firstName: "Grace", lastName: "Hopper" });
    const list = await a.call("GET", "/api/v1/client");
    const one = await a.call("GET", `/api/v1/client/${created.body.data.id}`);
    const refused = await api().call("GET", "/api/v1/client");
    const signedIn = await api().call("POST", "/api/v1/auth/sign-in", { email: "nobody@example.test", password: "wrong password" });
    for (const res of [created, list, one, refused, signedIn]) expect(res.headers.get("cache-control")).toBe("no-store");
    expect([list.headers.get("etag"), (await a.call("GET", "/api/v1/auth/me")).headers.get("etag"), (await a.call("GET", "/api/v1/user")).headers.get("etag")]).toEqual([
      null,
      null,
      null,
    ]);
    const etag = one.headers.get("etag");
    expect(etag).toMatch(/^"[^"]+"$/);
    const notModified = await a.call("GET", `/api/v1/client/${created.body.data.id}`, undefined, { "if-none-match": etag! });
    expect([notModified.status, notModified.text]).toEqual([304, ""]);
    expect((await api().call("GET", "/api/v1/capabilities")).headers.get("cache-control")).toBe("public, max-age=300");
  });
});

describe("rule 11: a sign-in flood", () => {
  it("200 concurrent bad sign-ins: the excess is 503000 with Retry-After, and a webhook delivery meanwhile arrives at once", async () => {
    const a = await owner();
    const receiver = await startReceiver(204);
    try {
      // A host name, so that the delivery needs a DNS lookup on the thread pool the hashes use.
      const url = receiver.url.replace("127.0.0.1", "localhost");
      expect((await a.call("POST", "/api/v1/webhook", { url, events: ["client.created"] })).status).toBe(201);
      let pending = 200;
      const flood = Array.from({ length: 200 }, () =>
        api()
          .call("POST", "/api/v1/auth/sign-in", { email: `nobody-${randomUUID()}@example.test`, password: "not the password" })
          .finally(() => {
            pending -= 1;
          }),
      );
      await waitFor(() => pending < 200, 60_000, 10);
      const started = Date.now();
      expect((await a.call("POST", "/api/v1/client", { firstName: "Flood", lastName: "Proof" })).status).toBe(201);
      await waitFor(() => receiver.received.length > 0, 60_000, 20);
      const deliveredMs = Date.now() - started;
      const stillPending = pending;
      const answers = await Promise.all(flood);
      // Unbounded, the delivery's lookup waited behind every hash queued before it (a minute here).
      expect(deliveredMs).toBeLessThan(5_000);
      expect(stillPending).toBeGreaterThan(0);
      const statuses = new Set(answers.map((res) => res.status));
      expect([...statuses].sort()).toEqual([401, 503]);
      const refused = answers.filter((r) => r.status === 503);
      expect(refused.filter((r) => r.body.error.code !== 503000 || !/^[1-9]\d*$/.test(r.headers.get("retry-after") ?? "")).map((r) => r.text)).toEqual([]);
    } finally {
      await receiver.close();
    }
  });
});

describe("rule 12: probes, request ids", () => {
  it("/readyz on the public port is a bare status; the metrics port names each dependency", async () => {
    const base = suite.product.baseUrl;
    const ready = await fetch(`${base}/readyz`);
    expect([ready.status, await ready.json()]).toEqual([200, { status: "ready" }]);
    expect(await (await fetch(`${base}/healthz`)).json()).toEqual({ status: "ok" });
    const detailed = await fetch(`http://127.0.0.1:${metricsPort}/readyz`);
    expect([detailed.status, await detailed.json()]).toEqual([200, { status: "ready", checks: { kv: "ok", identity: "ok", "crm-records": "ok", "webhook-delivery": "ok" } }]);
    expect((await fetch(`http://127.0.0.1:${metricsPort}/healthz`)).status).toBe(200);
  });

  it("a client's X-Request-Id is kept only when short and plain; every answer has one", async () => {
    const a = await owner();
    expect((await a.call("GET", "/api/v1/client", undefined, { "x-request-id": "ci-run_42:7" })).headers.get("x-request-id")).toBe("ci-run_42:7");
    for (const bad of ["x".repeat(129), "two words", "<b>"]) {
      expect((await a.call("GET", "/api/v1/client", undefined, { "x-request-id": bad })).headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
    }
  });
});
