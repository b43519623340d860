// The gateway's buffer cap (issue 16, item 4): a service answer larger than
// UPSTREAM_MAX_RESPONSE_BYTES is not relayed (500000, cause logged), and it is not read to the end
// either: undici stops at the limit, so the gateway's memory does not grow with the answer.
import http from "node:http";
import type { AddressInfo } from "node:net";
import type { Request } from "express";
import { isAppError, OUTCOME_IN_DOUBT_HEADER } from "@crm/errors";
import { loadConfig } from "../config";
import { Forwarder } from "./forwarder";

const CAP = 4096;
const HUGE_STREAM_BYTES = 64 * 1024 * 1024;

// Both ways: UNDICI_DISPATCH=false exchanges through undici's request() (docs/performance.md D10).
describe.each([true, false])("Forwarder with UPSTREAM_MAX_RESPONSE_BYTES=4096 (UNDICI_DISPATCH=%s)", (undiciDispatch) => {
  let server: http.Server;
  let forwarder: Forwarder;
  let streamed: Promise<number>;
  let reportStreamed: (bytes: number) => void;

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      if (req.url === "/fits") return void res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ data: "x".repeat(CAP - 20) }));
      if (req.url === "/declared") return void res.writeHead(200, { "content-length": String(CAP + 1) }).end("x".repeat(CAP + 1));
      if (req.url === "/headers") {
        res.setHeader("set-cookie", ["a=1; Path=/", "b=2; Path=/"]);
        return void res.writeHead(201, { "content-type": "application/json", etag: '"e1"', "x-internal-detail": "secret" }).end("{}");
      }
      if (req.url === "/empty") return void res.writeHead(204).end();
      if (req.url === "/in-doubt") return void res.writeHead(503, { "content-type": "application/json", "retry-after": "1", [OUTCOME_IN_DOUBT_HEADER]: "1" }).end("{}");
      // Headers, part of the body, then the connection is cut.
      if (req.url === "/broken") {
        res.writeHead(200, { "content-type": "application/json", "content-length": "100" });
        res.write("{");
        return void setTimeout(() => res.destroy(), 20);
      }
      // Chunked, no length announced, far larger than any buffer on the way: count what leaves.
      res.writeHead(200, { "content-type": "application/json" });
      const chunk = Buffer.alloc(64 * 1024, 120);
      let written = 0;
      res.on("close", () => reportStreamed(written));
      const pump = () => {
        while (written < HUGE_STREAM_BYTES && !res.destroyed) {
          written += chunk.length;
          if (!res.write(chunk)) return void res.once("drain", pump);
        }
        res.end();
      };
      pump();
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const config = loadConfig({ UPSTREAM_MAX_RESPONSE_BYTES: String(CAP), CRM_RECORDS_URL: url, IDENTITY_URL: url, WEBHOOK_DELIVERY_URL: url });
    forwarder = new Forwarder({
      services: { identity: config.IDENTITY_URL, "crm-records": config.CRM_RECORDS_URL, "webhook-delivery": config.WEBHOOK_DELIVERY_URL },
      internalTokenSecret: "forwarder-test-secret-0123456789abcdef",
      timeoutMs: config.UPSTREAM_TIMEOUT_MS,
      maxResponseBytes: config.UPSTREAM_MAX_RESPONSE_BYTES,
      undiciDispatch,
    });
  });
  afterAll(async () => {
    await forwarder?.close();
    server?.closeAllConnections();
    await new Promise((resolve) => server?.close(resolve));
  });

  const logged: object[] = [];
  function request(path: string): Request {
    return {
      method: "GET",
      originalUrl: path,
      requestId: "req-1",
      ip: "127.0.0.1",
      protocol: "http",
      headers: {},
      log: { error: (obj: object) => void logged.push(obj) },
    } as unknown as Request;
  }

  async function refusal(path: string): Promise<unknown> {
    return forwarder.forward("crm-records", request(path), undefined).then(
      () => undefined,
      (err: unknown) => err,
    );
  }

  it("relays an answer within the cap unchanged", async () => {
    const answer = await forwarder.forward("crm-records", request("/fits"), undefined);
    expect(answer.status).toBe(200);
    expect(answer.body.length).toBeLessThanOrEqual(CAP);
  });

  it("refuses an answer that announces a larger length, with 500000, and logs why", async () => {
    const err = await refusal("/declared");
    expect(isAppError(err) && err.code).toBe(500000);
    expect(logged.at(-1)).toMatchObject({ service: "crm-records", path: "/declared", limitBytes: CAP, contentLength: CAP + 1 });
  });

  it("stops reading a streamed answer at the cap instead of buffering it", async () => {
    streamed = new Promise((resolve) => (reportStreamed = resolve));
    const err = await refusal("/stream");
    expect(isAppError(err) && err.code).toBe(500000);
    expect(logged.at(-1)).toMatchObject({ service: "crm-records", path: "/stream", limitBytes: CAP });
    // The connection was cut: the service wrote only what socket buffers held, not the 64 MiB.
    expect(await streamed).toBeLessThan(HUGE_STREAM_BYTES / 4);
  });

  it("passes back the status, the allowed headers (repeated ones as they came) and the exact body", async () => {
    const answer = await forwarder.forward("crm-records", request("/headers"), undefined);
    expect(answer.status).toBe(201);
    expect(answer.headers).toEqual({ "content-type": "application/json", etag: '"e1"', "set-cookie": ["a=1; Path=/", "b=2; Path=/"] });
    expect(answer.body.toString()).toBe("{}");
    const empty = await forwarder.forward("crm-records", request("/empty"), undefined);
    expect([empty.status, empty.body.length]).toEqual([204, 0]);
  });

  it("tells the gateway of a write in doubt (issue 42), and never passes the internal header on", async () => {
    const answer = await forwarder.forward("identity", request("/in-doubt"), undefined);
    expect(answer).toMatchObject({ status: 503, outcomeInDoubt: true, headers: { "retry-after": "1" } });
    expect(answer.headers[OUTCOME_IN_DOUBT_HEADER]).toBeUndefined();
    expect((await forwarder.forward("identity", request("/headers"), undefined)).outcomeInDoubt).toBeUndefined();
  });

  it("answers 503000 when the service cannot be reached, and passes on an answer that breaks off", async () => {
    const down = new Forwarder({
      services: { identity: "http://127.0.0.1:1", "crm-records": "http://127.0.0.1:1", "webhook-delivery": "http://127.0.0.1:1" },
      internalTokenSecret: "forwarder-test-secret-0123456789abcdef",
      timeoutMs: 2000,
      maxResponseBytes: CAP,
      undiciDispatch,
    });
    try {
      const err = await down.forward("crm-records", request("/fits"), undefined).catch((e: unknown) => e);
      expect(isAppError(err) && err.code).toBe(503000);
    } finally {
      await down.close();
    }
    const broken = await refusal("/broken");
    expect(broken).toBeInstanceOf(Error);
    expect(isAppError(broken)).toBe(false);
  });

  it("keeps serving after a refusal", async () => {
    expect((await forwarder.forward("crm-records", request("/fits"), undefined)).status).toBe(200);
  });

  it("defaults to 32 MiB", () => {
    expect(loadConfig({}).UPSTREAM_MAX_RESPONSE_BYTES).toBe(32 * 1024 * 1024);
  });
});

describe("Forwarder with requests that wait by design (the change feed's wait)", () => {
  let server: http.Server;
  let forwarder: Forwarder;
  const held: http.ServerResponse[] = [];

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      if (req.url === "/waits") return void held.push(res);
      res.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    forwarder = new Forwarder({
      services: { identity: url, "crm-records": url, "webhook-delivery": url },
      internalTokenSecret: "forwarder-test-secret-0123456789abcdef",
      timeoutMs: 10_000,
      maxResponseBytes: 4096,
    });
  });
  afterAll(async () => {
    for (const res of held) res.destroy();
    await forwarder?.close();
    server?.closeAllConnections();
    await new Promise((resolve) => server?.close(resolve));
  });

  function request(path: string, waitsUpToMs?: number): Request {
    const res = { locals: waitsUpToMs === undefined ? {} : { route: { waitsUpToMs } } };
    return { method: "GET", originalUrl: path, requestId: "req-w", ip: "127.0.0.1", protocol: "http", headers: {}, res } as unknown as Request;
  }

  it("a hundred waiting requests do not hold up the service's other requests", async () => {
    const waiting = Array.from({ length: 100 }, () => forwarder.forward("crm-records", request("/waits", 30_000), undefined));
    for (let i = 0; i < 200 && held.length < 100; i++) await new Promise((resolve) => setTimeout(resolve, 25));
    expect(held.length).toBe(100);
    // Answered while all hundred still wait (the shared pool has 64 connections).
    expect((await forwarder.forward("crm-records", request("/now"), undefined)).status).toBe(200);
    for (const res of held.splice(0)) res.writeHead(200, { "content-type": "application/json" }).end('{"data":[]}');
    expect((await Promise.all(waiting)).map((answer) => answer.status)).toEqual(Array(100).fill(200));
  });
});
