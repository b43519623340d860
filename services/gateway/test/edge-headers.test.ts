// What the edge adds to or takes from every answer, through createApp (docs/security.md): Cache-Control
// on authenticated answers (rule 6), a bounded X-Request-Id and a trace of the edge's own unless
// TRUST_TRACEPARENT (rule 12), and probes on the public port that name nothing and cost nothing of the
// rate limit (rule 12).
import http from "node:http";
import type { AddressInfo } from "node:net";
import type { Express } from "express";
import supertest from "supertest";
import { MemoryKvStore } from "@crm/kv-store";
import { createLogger } from "@crm/logger";
import type { ReadinessCheck } from "@crm/service-kit";
import { startTracing, stopTracing } from "@crm/telemetry";
import type { Forwarder } from "../src/http/forwarder";
import { createSecurity, type Security } from "../src/security";
import { gatewayApp } from "./support/gateway-app.fixture";
import { FakeIdentity, INTERNAL_SECRET, JWT_SECRET } from "./support/security.fixture";

// Spans are exported nowhere: the OTLP exporter loads its HTTP agent with a dynamic import(), which jest's
// CommonJS runtime refuses. What is tested is the context the edge propagates, not the export.
jest.mock("@opentelemetry/exporter-trace-otlp-http", () => ({
  OTLPTraceExporter: class {
    export(_spans: unknown, done: (result: { code: number }) => void) {
      done({ code: 0 });
    }
    shutdown() {
      return Promise.resolve();
    }
    forceFlush() {
      return Promise.resolve();
    }
  },
}));

const RATE_LIMIT_MAX = 30;
const CLIENT_TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736";
const CLIENT_TRACEPARENT = `00-${CLIENT_TRACE_ID}-00f067aa0ba902b7-01`;

/** What the service saw of the last request that reached it. */
interface Seen {
  requestId: string | undefined;
  traceparent: string | undefined;
}

describe("the edge's headers and probes", () => {
  let kv: MemoryKvStore;
  let identity: FakeIdentity;
  let upstream: http.Server;
  const seen: Seen[] = [];
  const built: Array<{ security: Security; forwarder: Forwarder }> = [];
  /** Calls of the readiness checks. */
  let checked = 0;
  let crmRecordsUp = true;

  function gateway(options: { trustTraceparent?: boolean } = {}): Express {
    const logger = createLogger({ service: "gateway", level: "silent" });
    const security = createSecurity({
      config: { CORS_ALLOWED_ORIGINS: [], RATE_LIMIT_MAX, RATE_LIMIT_WINDOW_MS: 60_000, JWT_SECRET },
      kv,
      identityUrl: identity.url,
      internalTokenSecret: INTERNAL_SECRET,
      logger,
    });
    const url = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
    const readiness: ReadinessCheck[] = [
      { name: "kv", check: async () => void (checked += 1) },
      { name: "crm-records", check: async () => (crmRecordsUp ? undefined : Promise.reject(new Error("connect ECONNREFUSED 10.0.3.7:4002"))) },
    ];
    const { app, forwarder } = gatewayApp({
      logger,
      security,
      kv,
      services: { identity: url, "crm-records": url, "webhook-delivery": url },
      name: "edge-headers",
      trustedProxies: [],
      readiness,
      ...options,
    });
    built.push({ security, forwarder });
    return app;
  }

  beforeAll(async () => {
    kv = new MemoryKvStore();
    identity = new FakeIdentity(kv);
    await identity.start();
    // A service that would let shared caches keep its answers, and tags them as Express does by default.
    upstream = http.createServer((req, res) => {
      seen.push({ requestId: req.headers["x-request-id"] as string | undefined, traceparent: req.headers.traceparent as string | undefined });
      req.resume();
      req.on("end", () => {
        res.writeHead(req.method === "POST" ? 201 : 200, { "content-type": "application/json", "cache-control": "public, max-age=60", etag: '"a-strong-tag"' });
        res.end(JSON.stringify({ success: true, data: { accessToken: "eyJ.secret.token" } }));
      });
    });
    await new Promise<void>((resolve) => upstream.listen(0, "127.0.0.1", resolve));
  });
  afterAll(async () => {
    for (const g of built) {
      await g.security.close();
      await g.forwarder.close();
    }
    upstream?.closeAllConnections();
    await new Promise((resolve) => upstream?.close(resolve));
    await identity?.stop();
    await kv?.close();
  });

  it("every answer but a public document carries Cache-Control: no-store, whatever the service says (rule 6)", async () => {
    const app = gateway();
    const owner = await identity.addUser("OWNER");
    const jwt = { authorization: `Bearer ${(await identity.signIn(owner)).token}` };
    const key = { "x-api-key": (await identity.createKey(owner)).key };
    const viewer = { authorization: `Bearer ${(await identity.signIn(await identity.addUser("VIEWER"))).token}` };
    const json = { "content-type": "application/json" };

    const answers = {
      "GET with a JWT": await supertest(app).get("/api/v1/client").set(jwt),
      "GET with an API key": await supertest(app).get("/api/v1/client/0190a8c4-7f00-7000-8000-000000000000").set(key),
      "a POST": await supertest(app).post("/api/v1/client").set(jwt).set(json).send("{}"),
      "its idempotent replay": await (async () => {
        await supertest(app).post("/api/v1/client").set(jwt).set(json).set("idempotency-key", "edge-1").send("{}");
        return supertest(app).post("/api/v1/client").set(jwt).set(json).set("idempotency-key", "edge-1").send("{}");
      })(),
      "no credentials (401000)": await supertest(app).get("/api/v1/client"),
      "a refused permission (401014)": await supertest(app).delete("/api/v1/client/0190a8c4-7f00-7000-8000-000000000000").set(viewer),
      "sign-in (a public POST handing out tokens)": await supertest(app).post("/api/v1/auth/sign-in").set(json).send("{}"),
      "an unknown route": await supertest(app).get("/api/v1/nope").set(jwt),
    };
    expect(Object.entries(answers).map(([name, res]) => [name, res.headers["cache-control"]])).toEqual(Object.keys(answers).map((name) => [name, "no-store"]));
    expect(answers["its idempotent replay"].headers["idempotent-replayed"]).toBe("true");
    // The service's own (strong) ETag is relayed; only its caching is the edge's to say.
    expect(answers["GET with a JWT"].headers.etag).toBe('"a-strong-tag"');
    // Public documents keep their own caching.
    expect((await supertest(app).get("/api/v1/capabilities")).headers["cache-control"]).toBe("public, max-age=300");
  });

  it("keeps a client's X-Request-Id only when it is 1-128 of [A-Za-z0-9._:-]; else a new one, also to the service (rule 12)", async () => {
    const app = gateway();
    const jwt = { authorization: `Bearer ${(await identity.signIn(await identity.addUser("OWNER"))).token}` };
    const ask = async (id: string | undefined) => {
      const req = supertest(app).get("/api/v1/client").set(jwt);
      const res = await (id === undefined ? req : req.set("x-request-id", id));
      expect(res.status).toBe(200);
      return { answered: res.headers["x-request-id"] as string, forwarded: seen.at(-1)!.requestId };
    };
    const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
    const sane = "client.trace_01:abc-DEF";
    expect(await ask(sane)).toEqual({ answered: sane, forwarded: sane });
    expect(await ask("x".repeat(128))).toEqual({ answered: "x".repeat(128), forwarded: "x".repeat(128) });
    for (const bad of ["x".repeat(129), "has space", "new\u00e9", "a/b", "<script>", "a,b"]) {
      const { answered, forwarded } = await ask(bad);
      expect([bad, answered]).toEqual([bad, expect.stringMatching(uuid)]);
      expect(forwarded).toBe(answered);
    }
    const none = await ask(undefined);
    expect(none.answered).toMatch(uuid);
    // Every answer has one, the edge's own answers included.
    for (const res of [await supertest(app).get("/healthz"), await supertest(app).get("/api/v1/nope"), await supertest(app).get("/api/v1/client")]) {
      expect(res.headers["x-request-id"]).toMatch(uuid);
    }
  });

  it("tracing off: a client's traceparent reaches the services only with TRUST_TRACEPARENT (rule 12)", async () => {
    const forwardedWith = async (app: Express) => {
      const jwt = { authorization: `Bearer ${(await identity.signIn(await identity.addUser("OWNER"))).token}` };
      expect((await supertest(app).get("/api/v1/client").set(jwt).set("traceparent", CLIENT_TRACEPARENT)).status).toBe(200);
      return seen.at(-1)!.traceparent;
    };
    expect(await forwardedWith(gateway())).toBeUndefined();
    expect(await forwardedWith(gateway({ trustTraceparent: true }))).toBe(CLIENT_TRACEPARENT);
  });

  it("tracing on: the edge starts a trace of its own unless TRUST_TRACEPARENT, which continues the client's (rule 12)", async () => {
    startTracing({ endpoint: "http://127.0.0.1:9/unused", serviceName: "gateway-test" });
    try {
      const traceOf = async (app: Express) => {
        const jwt = { authorization: `Bearer ${(await identity.signIn(await identity.addUser("OWNER"))).token}` };
        expect((await supertest(app).get("/api/v1/client").set(jwt).set("traceparent", CLIENT_TRACEPARENT)).status).toBe(200);
        const traceparent = seen.at(-1)!.traceparent;
        expect(traceparent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-0[01]$/);
        return traceparent!.split("-")[1];
      };
      const own = await traceOf(gateway());
      expect(own).not.toBe(CLIENT_TRACE_ID);
      expect(await traceOf(gateway())).not.toBe(own);
      expect(await traceOf(gateway({ trustTraceparent: true }))).toBe(CLIENT_TRACE_ID);
    } finally {
      await stopTracing();
    }
  });

  it("/healthz and /readyz on the public port: a bare status, one round of checks per second, never rate limited (rule 12)", async () => {
    const app = gateway();
    crmRecordsUp = false;
    checked = 0;
    const probes = await Promise.all(Array.from({ length: 2 * RATE_LIMIT_MAX }, () => supertest(app).get("/readyz")));
    expect(new Set(probes.map((res) => `${res.status} ${res.text}`))).toEqual(new Set(['503 {"status":"not ready"}']));
    expect(checked).toBe(1);
    crmRecordsUp = true;
    const health = await Promise.all(Array.from({ length: 2 * RATE_LIMIT_MAX }, () => supertest(app).get("/healthz")));
    expect(new Set(health.map((res) => `${res.status} ${res.text}`))).toEqual(new Set(['200 {"status":"ok"}']));
    expect(health[0]!.headers["x-ratelimit-remaining"]).toBeUndefined();
    // The address's budget is untouched: its first counted request still has all of it but one.
    const counted = await supertest(app).post("/api/v1/auth/sign-in").set("content-type", "application/json").send("{}");
    expect(counted.headers["x-ratelimit-remaining"]).toBe(String(RATE_LIMIT_MAX - 1));
  });
});
