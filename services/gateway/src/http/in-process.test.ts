// The single process's forwards without loopback HTTP (in-process.ts): for a real service app (every
// middleware of createServiceApp), the client gets what it gets over HTTP, status, passed headers and
// body byte for byte; the limits (answer size, time-out, a stopped service) give the same errors.
// Both ways: with FORWARD_IN_PROCESS=false (docs/performance.md D11) the same forwarder goes over loopback HTTP.
import type { Request } from "express";
import express from "express";
import { isAppError } from "@crm/errors";
import { createLogger } from "@crm/logger";
import { createServiceApp, listen, startService, type InProcessHandler, type RunningService } from "@crm/service-kit";
import { Forwarder } from "./forwarder";

const SECRET = "in-process-test-secret-0123456789abcdef";
const CAP = 4096;
const principal = { businessId: "b1", authType: "jwt" as const, userId: "u1", apiKeyId: null, sessionId: "s1", jti: "j1", permissions: [] };

describe.each([true, false])("Forwarder with the service in the same process (FORWARD_IN_PROCESS=%s)", (forwardInProcess) => {
  let service: RunningService;
  let handler: InProcessHandler;
  let overHttp: Forwarder;
  let inProcess: Forwarder;
  /** What the service's handlers saw, by request id. */
  const seen = new Map<string, Record<string, unknown>>();
  /** Responses of the service that closed, with whether they had finished. */
  const closed: Array<{ path: string; finished: boolean }> = [];
  let release: (() => void) | undefined;
  const logged: object[] = [];

  beforeAll(async () => {
    const logger = createLogger({ service: "crm-records", level: "silent" });
    const api = express.Router();
    api.use((req, res, next) => {
      res.on("close", () => closed.push({ path: req.originalUrl, finished: res.writableFinished }));
      next();
    });
    api.post("/echo", (req, res) => {
      seen.set(req.requestId, {
        body: req.body,
        ip: req.ip,
        protocol: req.protocol,
        host: req.headers.host,
        forwardedFor: req.headers["x-forwarded-for"],
        userAgent: req.headers["user-agent"],
        principal: req.principal?.userId,
        query: req.query,
        bornWithApp: Object.getPrototypeOf(req) === app.request && Object.getPrototypeOf(res) === app.response,
      });
      res.setHeader("ETag", '"e1"');
      res.setHeader("X-Internal-Detail", "not passed");
      res.status(201).json({ data: req.body });
    });
    api.get("/headers", (_req, res) => {
      res.setHeader("Set-Cookie", ["a=1; Path=/", "b=2; Path=/"]);
      res.setHeader("Retry-After", 5);
      res.writeHead(200, { "content-type": "application/json", "cache-control": "no-store" }).end("{}");
    });
    api.get("/empty", (_req, res) => void res.status(204).end());
    api.get("/streamed", (_req, res) => {
      res.type("text/plain");
      res.write("one,");
      setImmediate(() => res.end(Buffer.from("two")));
    });
    api.get("/declared", (_req, res) => void res.set("content-length", String(CAP + 1)).send("x".repeat(CAP + 1)));
    // Streamed past the cap one chunk a turn, so the cut comes while it is still writing.
    api.get("/large", (_req, res) => {
      let written = 0;
      const pump = () => {
        if (written++ === 8) return void res.end();
        res.write("x".repeat(1024));
        setImmediate(pump);
      };
      pump();
    });
    api.get("/fails", () => {
      throw new Error("boom");
    });
    api.get("/slow", (_req, res) => {
      release = () => void res.json({ late: true });
    });
    const app = createServiceApp({ logger, internalTokenSecret: SECRET, readiness: [], api });
    service = await startService("crm-records", logger, async (undo) => {
      const server = undo.add(await listen(app, 0, "127.0.0.1"), (s) => s.close(100));
      return { url: server.url, port: server.port };
    });
    handler = service.inProcess!;
    const services = { identity: service.url, "crm-records": service.url, "webhook-delivery": service.url };
    const options = { internalTokenSecret: SECRET, timeoutMs: 300, maxResponseBytes: CAP };
    overHttp = new Forwarder({ services, ...options });
    inProcess = new Forwarder({ services, inProcess: { "crm-records": handler }, forwardInProcess, ...options });
  });
  afterAll(async () => {
    await overHttp?.close();
    await inProcess?.close();
    await service?.stop();
  });

  let requests = 0;
  function request(method: string, path: string, body?: unknown): Request {
    const rawBody = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    return {
      method,
      originalUrl: path,
      requestId: `req-${++requests}`,
      ip: "203.0.113.9",
      protocol: "https",
      headers: { ...(rawBody ? { "content-type": "application/json" } : {}), "user-agent": "test-agent", authorization: "Bearer not-forwarded" },
      rawBody,
      log: { error: (obj: object) => void logged.push(obj) },
    } as unknown as Request;
  }

  async function both(method: string, path: string, body?: unknown) {
    const http = await overHttp.forward("crm-records", request(method, path, body), principal);
    const local = await inProcess.forward("crm-records", request(method, path, body), principal);
    return { http, local };
  }

  it("finds the handler of the service's listener", () => {
    expect(handler.host).toBe(new URL(service.url).host);
    expect(handler.open).toBe(true);
  });

  it("runs the service's app on a request like one off the wire and passes back what HTTP passes back", async () => {
    const { http, local } = await both("POST", "/api/v1/echo?page=2", { name: "Ada", note: "é" });
    expect(local).toEqual(http);
    expect(local.status).toBe(201);
    expect(local.headers).toEqual({ "content-type": "application/json; charset=utf-8", etag: '"e1"' });
    expect(JSON.parse(local.body.toString())).toEqual({ data: { name: "Ada", note: "é" } });
    const [overWire, inProc] = [seen.get(`req-${requests - 1}`), seen.get(`req-${requests}`)];
    expect(inProc).toEqual(overWire);
    expect(inProc).toMatchObject({
      ip: "127.0.0.1",
      protocol: "http",
      forwardedFor: "203.0.113.9",
      userAgent: "test-agent",
      principal: "u1",
      query: { page: "2" },
      bornWithApp: true,
    });
    expect(inProc!["host"]).toBe(handler.host);
  });

  it("passes back repeated and numeric headers, written heads, empty and streamed answers as HTTP does", async () => {
    for (const path of ["/api/v1/headers", "/api/v1/empty", "/api/v1/streamed"]) {
      const { http, local } = await both("GET", path);
      expect(local).toEqual(http);
    }
    const { local } = await both("GET", "/api/v1/headers");
    expect(local.headers).toEqual({ "content-type": "application/json", "cache-control": "no-store", "retry-after": "5", "set-cookie": ["a=1; Path=/", "b=2; Path=/"] });
    expect((await both("GET", "/api/v1/streamed")).local.body.toString()).toBe("one,two");
  });

  it("passes back the service's errors as HTTP does: its 404, its 401, its 500", async () => {
    const { http, local } = await both("GET", "/api/v1/fails");
    expect(local).toEqual(http);
    expect(local.status).toBe(500);
    expect((await both("GET", "/api/v1/nowhere")).local.status).toBe(404);
    const anonymous = await inProcess.forward("crm-records", request("GET", "/api/v1/headers"), undefined);
    const anonymousHttp = await overHttp.forward("crm-records", request("GET", "/api/v1/headers"), undefined);
    expect(anonymous).toEqual(anonymousHttp);
    expect(anonymous.status).toBe(401);
  });

  it("refuses an answer beyond UPSTREAM_MAX_RESPONSE_BYTES with 500000, declared or streamed, and logs why", async () => {
    for (const [path, declared] of [
      ["/api/v1/declared", { contentLength: CAP + 1 }],
      ["/api/v1/large", {}],
    ] as const) {
      const err = await inProcess.forward("crm-records", request("GET", path), principal).catch((e: unknown) => e);
      expect(isAppError(err) && err.code).toBe(500000);
      expect(logged.at(-1)).toEqual({ service: "crm-records", path, limitBytes: CAP, ...declared });
    }
    // The service's response was closed on it, as a cut connection closes it (over HTTP, once the server sees the cut).
    await new Promise((r) => setImmediate(r));
    for (let turns = 0; turns < 100 && !closed.some((c) => c.path === "/api/v1/large"); turns++) await new Promise((r) => setTimeout(r, 10));
    expect(closed.filter((c) => c.path === "/api/v1/large").at(-1)).toEqual({ path: "/api/v1/large", finished: false });
  });

  it("answers 503000 when the service does not answer in time, and drops what it writes later", async () => {
    const err = await inProcess.forward("crm-records", request("GET", "/api/v1/slow"), principal).catch((e: unknown) => e);
    expect(isAppError(err) && err.code).toBe(503000);
    await new Promise((r) => setImmediate(r));
    expect(closed.at(-1)).toEqual({ path: "/api/v1/slow", finished: false });
    release!();
    await new Promise((r) => setTimeout(r, 10));
    expect(closed.filter((c) => c.path === "/api/v1/slow")).toHaveLength(1);
    // Still serving.
    expect((await inProcess.forward("crm-records", request("GET", "/api/v1/empty"), principal)).status).toBe(204);
  });

  it("closes each answered response once, finished, as node:http does", async () => {
    const before = closed.length;
    await inProcess.forward("crm-records", request("POST", "/api/v1/echo", { n: 1 }), principal);
    await new Promise((r) => setImmediate(r));
    expect(closed.slice(before)).toEqual([{ path: "/api/v1/echo", finished: true }]);
  });

  it("answers 503000 once the service stopped listening, as a closed port refuses (switched off: over HTTP, which still listens)", async () => {
    const stopped: InProcessHandler = { ...handler, open: false };
    const refusing = new Forwarder({
      services: { identity: service.url, "crm-records": service.url, "webhook-delivery": service.url },
      inProcess: { "crm-records": stopped },
      forwardInProcess,
      internalTokenSecret: SECRET,
      timeoutMs: 300,
      maxResponseBytes: CAP,
    });
    try {
      const answer = await refusing.forward("crm-records", request("GET", "/api/v1/empty"), principal).catch((e: unknown) => e);
      if (forwardInProcess) expect(isAppError(answer) && answer.code).toBe(503000);
      else expect((answer as { status: number }).status).toBe(204);
    } finally {
      await refusing.close();
    }
  });
});
