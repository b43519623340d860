import http from "node:http";
import type { AddressInfo } from "node:net";
import type { Request } from "express";
import type { Principal } from "@crm/contracts";
import { verifyInternalToken } from "@crm/service-kit";
import { Forwarder } from "./forwarder";
import { InternalTokens } from "./internal-tokens";

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

// D9's token reuse (docs/performance.md), both ways: a token signed per call is the same bytes as the
// one reused within its second, so turning reuse off changes nothing a service sees.
describe.each([true, false])("InternalTokens (INTERNAL_TOKEN_REUSE=%s)", (reuse) => {
  let nowMs = 1_800_000_000_250;
  const tokens = new InternalTokens(secret, reuse, () => nowMs);
  const claimsOf = (token: string) => JSON.parse(Buffer.from(token.split(".")[1]!, "base64url").toString("utf8")) as { iat: number; exp: number };

  it("signs for the clock's second, 60 s of life, one token per caller and second", () => {
    const u1 = principal("u1");
    const first = tokens.for(u1);
    expect(claimsOf(first)).toMatchObject({ iat: 1_800_000_000, exp: 1_800_000_060 });
    expect(verifyInternalToken(first, secret).principal).toEqual(u1);
    nowMs += 700;
    expect(tokens.for(u1)).toBe(first);
    expect(tokens.for({ ...u1 })).toBe(first);
    nowMs += 300;
    const next = tokens.for(u1);
    expect(claimsOf(next).iat).toBe(1_800_000_001);
  });

  it("keeps callers apart, and a caller whose state changed gets its new principal's token", () => {
    const before = principal("u1");
    const demoted = { ...before, permissions: [] };
    expect(verifyInternalToken(tokens.for(before), secret).principal?.permissions).toEqual(["clients.read"]);
    expect(verifyInternalToken(tokens.for(demoted), secret).principal?.permissions).toEqual([]);
    expect(verifyInternalToken(tokens.for(principal("u2")), secret).principal?.userId).toBe("u2");
    expect(verifyInternalToken(tokens.for(undefined), secret).principal).toBeUndefined();
  });
});
