import http from "node:http";
import type { AddressInfo } from "node:net";
import type { Request } from "express";
import type { Principal } from "@crm/contracts";
import { verifyInternalToken } from "@crm/service-kit";
import { Forwarder } from "./forwarder";

const secret = "i".repeat(40);
const principal = (userId: string): Principal => ({
  businessId: "0193a1b2-0000-7000-8000-000000000000",
  authType: "jwt",
  userId,
  apiKeyId: null,
  sessionId: "session",
  jti: `jti-${userId}`,
  permissions: ["clients.read"],
});

function req(requestId: string): Request {
  return { method: "GET", originalUrl: "/api/v1/client", requestId, ip: "127.0.0.1", protocol: "http", headers: {} } as unknown as Request;
}

describe("Forwarder: internal tokens", () => {
  let server: http.Server;
  const seen: Array<{ token: string; requestId: string }> = [];
  let forwarder: Forwarder;

  beforeAll(async () => {
    server = http.createServer((r, res) => {
      seen.push({ token: String(r.headers["x-internal-token"]), requestId: String(r.headers["x-request-id"]) });
      res.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    forwarder = new Forwarder({
      services: { identity: url, "crm-records": url, "webhook-delivery": url },
      internalTokenSecret: secret,
      timeoutMs: 5000,
      maxResponseBytes: 1_000_000,
    });
  });
  afterAll(async () => {
    await forwarder.close();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it("names each request's caller in its internal token; the request id travels in its header", async () => {
    seen.length = 0;
    await forwarder.forward("crm-records", req("r1"), principal("u1"));
    await forwarder.forward("crm-records", req("r2"), principal("u1"));
    await forwarder.forward("crm-records", req("r3"), principal("u2"));
    expect(seen.map((s) => s.requestId)).toEqual(["r1", "r2", "r3"]);
    expect(verifyInternalToken(seen[1]!.token, secret).principal?.userId).toBe("u1");
    expect(seen[2]!.token).not.toBe(seen[0]!.token);
    expect(verifyInternalToken(seen[0]!.token, secret).principal?.userId).toBe("u1");
    expect(verifyInternalToken(seen[2]!.token, secret).principal?.userId).toBe("u2");
  });
});
