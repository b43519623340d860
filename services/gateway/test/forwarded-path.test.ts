// Forwarded requests skip Express's router (router-bypass.ts, docs/performance.md D2). Every answer must
// be the one Express's own path gives: two apps built alike, one served as the gateway serves it, one
// as an app mounted in another (called with a callback, which Express routes), asked the same things.
// Run both ways: with FORWARD_WITHOUT_ROUTER=false the first app routes everything too.
import http from "node:http";
import type { AddressInfo } from "node:net";
import type { Express } from "express";
import supertest from "supertest";
import { MemoryKvStore } from "@crm/kv-store";
import { createLogger } from "@crm/logger";
import type { Forwarder } from "../src/http/forwarder";
import { createSecurity, type Security } from "../src/security";
import { gatewayApp } from "./support/gateway-app.fixture";
import { FakeIdentity, INTERNAL_SECRET, JWT_SECRET } from "./support/security.fixture";

/** Headers that differ between two answers by nature: the clock, and the window's reset second. */
const VOLATILE = new Set(["date", "x-ratelimit-reset", "ratelimit", "keep-alive", "connection"]);

interface Served {
  app: Express;
  security: Security;
  forwarder: Forwarder;
  /** Calls of Express's router, to tell which path a request took. */
  routed: number;
}

describe.each([true, false])("forwarded requests, served directly and mounted (FORWARD_WITHOUT_ROUTER=%s)", (bypass) => {
  let kv: MemoryKvStore;
  let identity: FakeIdentity;
  let upstream: http.Server;
  let fast: Served;
  let routed: Served;
  let fastServer: http.Server;
  let routedServer: http.Server;

  function build(upstreamUrl: string): Served {
    const logger = createLogger({ service: "gateway", level: "silent" });
    const security = createSecurity({
      config: { CORS_ALLOWED_ORIGINS: ["https://app.example.com"], RATE_LIMIT_MAX: 12, RATE_LIMIT_WINDOW_MS: 60_000, JWT_SECRET },
      kv,
      identityUrl: identity.url,
      internalTokenSecret: INTERNAL_SECRET,
      logger,
    });
    const { app, forwarder } = gatewayApp({
      logger,
      security,
      kv,
      // webhook-delivery is down: its routes answer 503000.
      services: { identity: upstreamUrl, "crm-records": upstreamUrl, "webhook-delivery": "http://127.0.0.1:1" },
      name: "forwarded-path",
      trustedProxies: ["127.0.0.1/32", "::1/128"],
      forwardWithoutRouter: bypass,
    });
    const served: Served = { app, security, forwarder, routed: 0 };
    const router = (app as unknown as { router: { handle: (...args: unknown[]) => unknown } }).router;
    const handle = router.handle.bind(router);
    router.handle = (...args: unknown[]) => {
      served.routed += 1;
      return handle(...args);
    };
    return served;
  }

  const listen = async (listener: http.RequestListener): Promise<http.Server> => {
    const server = http.createServer(listener);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    return server;
  };

  beforeAll(async () => {
    kv = new MemoryKvStore();
    identity = new FakeIdentity(kv);
    await identity.start();
    // The service: echoes what reached it (path, the headers a service may read, the body).
    upstream = await listen((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (chunk: Buffer) => chunks.push(chunk));
      req.on("end", () => {
        const seen = {
          method: req.method,
          url: req.url,
          body: Buffer.concat(chunks).toString("utf8"),
          headers: Object.fromEntries(["x-request-id", "x-forwarded-for", "x-forwarded-proto", "content-type", "content-length", "accept"].map((h) => [h, req.headers[h] ?? null])),
        };
        res.setHeader("set-cookie", ["a=1; Path=/", "b=2; Path=/"]);
        res.setHeader("x-internal-detail", "not passed on");
        res.writeHead(req.method === "POST" ? 201 : 200, { "content-type": "application/json" });
        res.end(req.method === "HEAD" ? undefined : JSON.stringify({ success: true, data: seen }));
      });
    });
    const upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
    fast = build(upstreamUrl);
    routed = build(upstreamUrl);
    fastServer = await listen(fast.app);
    // Called with a callback, an Express app routes the request itself (as when mounted in another).
    routedServer = await listen((req, res) => routed.app(req as never, res as never, () => undefined));
  });
  afterAll(async () => {
    for (const server of [fastServer, routedServer, upstream]) {
      server?.closeAllConnections();
      await new Promise((resolve) => server?.close(resolve));
    }
    for (const served of [fast, routed]) {
      await served?.security.close();
      await served?.forwarder.close();
    }
    await identity.stop();
    await kv.close();
  });

  type Ask = (agent: supertest.Agent) => supertest.Test;

  let asked = 0;
  /** The same request to both (with the same request id); their answers must be equal but for the clock. */
  async function same(ask: Ask): Promise<supertest.Response> {
    const id = `same-${++asked}`;
    const a = await ask(supertest.agent(fastServer)).set("x-request-id", id);
    const b = await ask(supertest.agent(routedServer)).set("x-request-id", id);
    const headers = (res: supertest.Response) => Object.fromEntries(Object.entries(res.headers).filter(([name]) => !VOLATILE.has(name)));
    expect({ status: a.status, headers: headers(a), body: a.text }).toEqual({ status: b.status, headers: headers(b), body: b.text });
    // draft-8's RateLimit differs only in its seconds to the reset.
    expect(String(a.headers.ratelimit ?? "").replace(/t=\d+/, "")).toBe(String(b.headers.ratelimit ?? "").replace(/t=\d+/, ""));
    return a;
  }

  it("answers every kind of request alike, and routes only what is not forwarded", async () => {
    const owner = await identity.addUser("OWNER");
    const viewer = await identity.addUser("VIEWER");
    const { token } = await identity.signIn(owner);
    const viewerToken = (await identity.signIn(viewer)).token;
    const { key } = await identity.createKey(owner);
    const jwt = { authorization: `Bearer ${token}` };
    const routedBefore = { fast: fast.routed, routed: routed.routed };

    const list = await same((s) => s.get("/api/v1/client?perPage=2&where=isActive:bool(true)").set(jwt).set("x-forwarded-for", "203.0.113.9"));
    expect(list.status).toBe(200);
    expect(list.body.data).toMatchObject({
      url: "/api/v1/client?perPage=2&where=isActive:bool(true)",
      headers: { "x-request-id": list.headers["x-request-id"], "x-forwarded-for": "203.0.113.9" },
    });
    expect(list.headers["set-cookie"]).toEqual(["a=1; Path=/", "b=2; Path=/"]);
    expect(list.headers["x-internal-detail"]).toBeUndefined();
    expect((await same((s) => s.get("/api/v1/client/").set(jwt))).status).toBe(200);
    expect((await same((s) => s.head("/api/v1/client").set(jwt))).status).toBe(200);
    const created = await same((s) => s.post("/api/v1/client").set(jwt).set("content-type", "application/json").send('{"firstName":"Ada","lastName":"Lovelace"}'));
    expect(created.status).toBe(201);
    expect(created.body.data.body).toBe('{"firstName":"Ada","lastName":"Lovelace"}');
    expect((await same((s) => s.post("/api/v1/client").set(jwt).set("content-type", "application/json").send("{nope"))).body.error.code).toBe(400002);
    expect((await same((s) => s.post("/api/v1/client").set(jwt).set("content-type", "text/plain").send("hi"))).body.error.code).toBe(415000);
    expect((await same((s) => s.get("/api/v1/client").set("x-api-key", key))).status).toBe(200);
    expect((await same((s) => s.get("/api/v1/client"))).body.error.code).toBe(401000);
    expect((await same((s) => s.get("/api/v1/client").set("authorization", "Bearer not.a.token"))).body.error.code).toBe(401010);
    expect((await same((s) => s.delete("/api/v1/client/0190a8c4-7f00-7000-8000-000000000000").set("authorization", `Bearer ${viewerToken}`))).body.error.code).toBe(401014);
    expect((await same((s) => s.get("/api/v1/client").set(jwt).set("origin", "null"))).body.error.code).toBe(403000);
    const credentialed = await same((s) => s.get("/api/v1/client").set(jwt).set("origin", "https://app.example.com"));
    expect(credentialed.headers["access-control-allow-credentials"]).toBe("true");
    expect(credentialed.headers.vary).toBe("Origin");
    expect((await same((s) => s.get("/api/v1/client").set("x-api-key", key).set("origin", "https://elsewhere.test"))).headers["access-control-allow-origin"]).toBe("*");
    expect((await same((s) => s.get("/api/v1/webhook").set(jwt))).body.error.code).toBe(503000);
    // Public and forwarded (identity's sign-in), counted per address.
    expect((await same((s) => s.post("/api/v1/auth/sign-in").set("content-type", "application/json").send("{}"))).status).toBe(201);
    const forwardedRouted = fast.routed - routedBefore.fast;

    // Not forwarded: the gateway's own answers, through Express's router in both apps.
    expect((await same((s) => s.get("/api/v1/nope").set(jwt))).body.error.code).toBe(404000);
    expect((await same((s) => s.get("/healthz"))).body).toEqual({ status: "ok" });
    expect((await same((s) => s.options("/api/v1/client").set("origin", "https://app.example.com").set("access-control-request-method", "GET"))).status).toBe(204);

    expect(forwardedRouted).toBe(bypass ? 0 : 15);
    expect(fast.routed - routedBefore.fast).toBe(bypass ? 3 : 18);
    expect(routed.routed - routedBefore.routed).toBe(18);
  });

  it("answers 429000 with Retry-After alike once the budget is spent", async () => {
    const user = await identity.addUser("OWNER");
    const jwt = { authorization: `Bearer ${(await identity.signIn(user)).token}` };
    let last: supertest.Response | undefined;
    for (let i = 0; i < 13; i++) last = await same((s) => s.get("/api/v1/client").set(jwt));
    expect(last?.status).toBe(429);
    expect(last?.body.error.code).toBe(429000);
    expect(last?.headers["retry-after"]).toBeDefined();
  });
});
