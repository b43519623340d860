// Extensions §E3.2 at the gateway: a key's address allow-list and its own rate limit, decided from the
// key's cached state (no I/O per request), with the client address from TRUSTED_PROXIES only. Order:
// the key is valid → its address is allowed (403001, counted on the address) → its own limit (429000)
// → scopes (401014).
import supertest from "supertest";
import { MemoryKvStore } from "@crm/kv-store";
import { buildGateway, FakeIdentity, type Gateway } from "./support/security.fixture";

// Both ways of counting (docs/performance.md D6): the gateway's own middleware, express-rate-limit's.
describe.each([true, false])("gateway: API keys' allow-lists and own rate limits (extensions §E3.2; RATE_LIMIT_OWN_MIDDLEWARE=%s)", (ownMiddleware) => {
  const kv = new MemoryKvStore();
  const identity = new FakeIdentity(kv);
  let gw: Gateway;

  beforeAll(async () => {
    await identity.start();
    gw = buildGateway(kv, identity.url, { RATE_LIMIT_MAX: 1000, RATE_LIMIT_OWN_MIDDLEWARE: ownMiddleware });
    // TRUSTED_PROXIES=127.0.0.1/32,10.0.0.0/8: supertest connects from loopback, so X-Forwarded-For
    // says where each request comes from.
    gw.app.set("trust proxy", ["127.0.0.1/32", "::ffff:127.0.0.1/128", "10.0.0.0/8"]);
  });
  afterAll(async () => {
    await gw.security.close();
    await identity.stop();
    await kv.close();
  });

  const get = (path: string, key: string, forwardedFor?: string) => {
    const req = supertest(gw.app).get(path).set("x-api-key", key);
    return forwardedFor === undefined ? req : req.set("x-forwarded-for", forwardedFor);
  };

  it("lets a key through only from its allowed addresses, reading X-Forwarded-For right to left past trusted proxies", async () => {
    const owner = await identity.addUser("OWNER");
    const { key } = await identity.createKey(owner, { allowedIps: ["203.0.113.0/24", "2001:db8::/32"] });
    expect((await get("/api/v1/client", key, "203.0.113.5")).status).toBe(200);
    expect((await get("/api/v1/client", key, "2001:db8::7")).status).toBe(200);
    // A proxy of ours (10.x) appended the client; a forged entry on the left is never read.
    expect((await get("/api/v1/client", key, "198.51.100.7, 203.0.113.5, 10.1.1.1")).status).toBe(200);
    const refused = await get("/api/v1/client", key, "203.0.113.5, 198.51.100.7");
    expect(refused.status).toBe(403);
    expect(refused.body).toEqual({ success: false, error: { code: 403001, message: "IP address not allowed" } });
    expect((await get("/api/v1/client", key)).body.error.code).toBe(403001); // loopback itself is not on the list
  });

  it("trusts no header when the peer is not a trusted proxy", async () => {
    const owner = await identity.addUser("OWNER");
    const { key } = await identity.createKey(owner, { allowedIps: ["203.0.113.0/24"] });
    gw.app.set("trust proxy", false);
    try {
      const res = await get("/api/v1/client", key, "203.0.113.5")
        .set("x-real-ip", "203.0.113.5")
        .set("cf-connecting-ip", "203.0.113.5")
        .set("forwarded", "for=203.0.113.5")
        .set("true-client-ip", "203.0.113.5");
      expect(res.body.error.code).toBe(403001);
    } finally {
      gw.app.set("trust proxy", ["127.0.0.1/32", "::ffff:127.0.0.1/128", "10.0.0.0/8"]);
    }
  });

  it("answers an invalid, revoked or expired key first, wherever it comes from", async () => {
    const owner = await identity.addUser("OWNER");
    const { key, digest } = await identity.createKey(owner, { allowedIps: ["203.0.113.0/24"] });
    // Another last character (the key's own may be an X).
    const wrong = `${key.slice(0, -1)}${key.endsWith("X") ? "Y" : "X"}`;
    expect((await get("/api/v1/client", wrong, "198.51.100.7")).body.error.code).toBe(401022);
    await identity.revokeKey(digest);
    expect((await get("/api/v1/client", key, "198.51.100.7")).body.error.code).toBe(401021);
  });

  it("uses the key's own limit and shows it in the headers; refusals by address never spend it", async () => {
    const owner = await identity.addUser("OWNER");
    const { key } = await identity.createKey(owner, { allowedIps: ["203.0.113.0/24"], rateLimit: { max: 2, windowSeconds: 60 } });
    for (let i = 0; i < 4; i++) {
      const refused = await get("/api/v1/client", key, "198.51.100.9");
      expect(refused.body.error.code).toBe(403001);
      expect(refused.headers["x-ratelimit-limit"]).toBe("1000"); // the address's budget
    }
    const first = await get("/api/v1/client", key, "203.0.113.1");
    expect(first.status).toBe(200);
    expect([first.headers["x-ratelimit-limit"], first.headers["x-ratelimit-remaining"]]).toEqual(["2", "1"]);
    expect((await get("/api/v1/client", key, "203.0.113.1")).status).toBe(200);
    const over = await get("/api/v1/client", key, "203.0.113.1");
    expect(over.status).toBe(429);
    expect(over.body.error.code).toBe(429000);
    expect([over.headers["x-ratelimit-limit"], over.headers["x-ratelimit-remaining"]]).toEqual(["2", "0"]);
    expect(Number(over.headers["retry-after"])).toBeGreaterThan(0);
    // Another key of the same user keeps the global limit.
    const other = await identity.createKey(owner);
    expect((await get("/api/v1/client", other.key, "203.0.113.1")).headers["x-ratelimit-limit"]).toBe("1000");
  });

  it("counts the key's own limit before its scopes are checked", async () => {
    const owner = await identity.addUser("OWNER");
    const { key } = await identity.createKey(owner, { scopes: ["clients.read"], rateLimit: { max: 1, windowSeconds: 60 } });
    expect((await get("/api/v1/invoice", key)).body.error.code).toBe(401014);
    expect((await get("/api/v1/invoice", key)).body.error.code).toBe(429000);
  });

  it("reports the address of a key's last use with its time", async () => {
    const owner = await identity.addUser("OWNER");
    const { key, id } = await identity.createKey(owner);
    expect((await get("/api/v1/client", key, "192.0.2.44")).status).toBe(200);
    await gw.security.close(); // flushes the use report
    const use = identity.useReports.flat().find((u) => u.id === id);
    expect(use?.ip).toBe("192.0.2.44");
    gw = buildGateway(kv, identity.url, { RATE_LIMIT_MAX: 1000, RATE_LIMIT_OWN_MIDDLEWARE: ownMiddleware });
    gw.app.set("trust proxy", ["127.0.0.1/32", "::ffff:127.0.0.1/128", "10.0.0.0/8"]);
  });
});
