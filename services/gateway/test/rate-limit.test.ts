// The global rate limit: buckets per key / user / address, headers, 429, the shared budget of two
// instances on one Redis, and failing open when Redis is gone (while authentication fails closed).
import net, { type AddressInfo } from "node:net";
import supertest from "supertest";
import { AccessTokenCodec, generateApiKey } from "@crm/auth-cache";
import { uuidv7 } from "@crm/contracts";
import { MemoryKvStore, RedisKvStore, type KvStore } from "@crm/kv-store";
import { testInfra, uniqueName, waitFor } from "@crm/testing";
import { buildGateway, FakeIdentity, JWT_SECRET, type Gateway } from "./support/security.fixture";

const describeRedis: jest.Describe = testInfra.redisUrl ? describe : describe.skip;

/**
 * A JWT that verifies but whose session is revoked fails authentication: the request counts per
 * address, as for any failed authentication, never in its user's bucket.
 */
async function revokedJwtCountsPerAddress(gw: Gateway, identity: FakeIdentity): Promise<void> {
  const user = await identity.addUser("OWNER");
  const revoked = await identity.signIn(user);
  const live = (await identity.signIn(user)).token;
  await identity.revokeSession(revoked.sid);
  const list = (token: string) => supertest(gw.app).get("/api/v1/client").set("authorization", `Bearer ${token}`);
  for (const remaining of ["2", "1", "0"]) {
    const refused = await list(revoked.token);
    expect(refused.body.error.code).toBe(401011);
    expect(refused.headers["x-ratelimit-remaining"]).toBe(remaining);
  }
  // The user's own bucket is untouched by the refused requests.
  const ok = await list(live);
  expect(ok.status).toBe(200);
  expect(ok.headers["x-ratelimit-remaining"]).toBe("2");
  expect((await list(revoked.token)).status).toBe(429);
}

// Both ways of counting (docs/performance.md D6): the gateway's own middleware, express-rate-limit's.
describe.each([true, false])("gateway rate limit (in-process store; RATE_LIMIT_OWN_MIDDLEWARE=%s)", (ownMiddleware) => {
  let kv: MemoryKvStore;
  let identity: FakeIdentity;
  let gw: Gateway;

  beforeAll(async () => {
    kv = new MemoryKvStore();
    identity = new FakeIdentity(kv);
    await identity.start();
    gw = buildGateway(kv, identity.url, { RATE_LIMIT_MAX: 3, RATE_LIMIT_WINDOW_MS: 60_000, RATE_LIMIT_OWN_MIDDLEWARE: ownMiddleware });
  });
  afterAll(async () => {
    await gw.security.close();
    await identity.stop();
    await kv.close();
  });

  it("counts down, answers 429000 with Retry-After, and keeps users apart", async () => {
    const a = (await identity.signIn(await identity.addUser("OWNER"))).token;
    const b = (await identity.signIn(await identity.addUser("OWNER"))).token;
    const started = Math.floor(Date.now() / 1000);
    const remaining: string[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await supertest(gw.app).get("/api/v1/client").set("authorization", `Bearer ${a}`);
      expect(res.status).toBe(200);
      expect(res.headers["x-ratelimit-limit"]).toBe("3");
      const reset = Number(res.headers["x-ratelimit-reset"]);
      // The window opens at the first request, which may take more than a second on a loaded machine:
      // bound the reset by the clock before the first request and after this response.
      expect(reset).toBeGreaterThanOrEqual(started + 59);
      expect(reset).toBeLessThanOrEqual(Math.ceil(Date.now() / 1000) + 61);
      expect(res.headers["ratelimit-policy"]).toMatch(/q=3; w=60/);
      expect(res.headers.ratelimit).toMatch(/r=\d+; t=\d+/);
      remaining.push(String(res.headers["x-ratelimit-remaining"]));
    }
    expect(remaining).toEqual(["2", "1", "0"]);
    const limited = await supertest(gw.app).get("/api/v1/client").set("authorization", `Bearer ${a}`);
    expect(limited.status).toBe(429);
    expect(limited.body).toEqual({ success: false, error: { code: 429000, message: "Too many requests" } });
    const retryAfter = Number(limited.headers["retry-after"]);
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(limited.headers["x-ratelimit-remaining"]).toBe("0");
    expect((await supertest(gw.app).get("/api/v1/client").set("authorization", `Bearer ${b}`)).status).toBe(200);
  });

  it("puts the current figures on preflights and Origin: null refusals without counting them", async () => {
    const fresh = buildGateway(kv, identity.url, { RATE_LIMIT_MAX: 3, RATE_LIMIT_OWN_MIDDLEWARE: ownMiddleware });
    try {
      await supertest(fresh.app).get("/api/v1/nope");
      const preflight = await supertest(fresh.app).options("/api/v1/client").set("origin", "https://x.test").set("access-control-request-method", "GET");
      expect(preflight.status).toBe(204);
      expect([preflight.headers["x-ratelimit-limit"], preflight.headers["x-ratelimit-remaining"]]).toEqual(["3", "2"]);
      expect(Number(preflight.headers["x-ratelimit-reset"])).toBeGreaterThan(Date.now() / 1000);
      const refused = await supertest(fresh.app).get("/api/v1/client").set("origin", "null");
      expect(refused.status).toBe(403);
      expect(refused.headers["x-ratelimit-remaining"]).toBe("2");
      const counted = await supertest(fresh.app).get("/api/v1/nope");
      expect(counted.headers["x-ratelimit-remaining"]).toBe("1");
    } finally {
      await fresh.security.close();
    }
  });

  it("counts a verified JWT whose session is revoked per address, not in its user's bucket", async () => {
    const fresh = buildGateway(kv, identity.url, { RATE_LIMIT_MAX: 3, RATE_LIMIT_OWN_MIDDLEWARE: ownMiddleware });
    try {
      await revokedJwtCountsPerAddress(fresh, identity);
    } finally {
      await fresh.security.close();
    }
  });

  it("counts requests without valid credentials, unknown routes and sign-in per client address", async () => {
    const fresh = buildGateway(kv, identity.url, { RATE_LIMIT_MAX: 3, RATE_LIMIT_OWN_MIDDLEWARE: ownMiddleware });
    try {
      const codes = [
        (await supertest(fresh.app).post("/api/v1/auth/sign-in")).status,
        (await supertest(fresh.app).get("/api/v1/nope")).status,
        (await supertest(fresh.app).get("/api/v1/client").set("authorization", "Bearer bad")).status,
        (await supertest(fresh.app).post("/api/v1/auth/sign-up")).status,
      ];
      expect(codes).toEqual([200, 404, 401, 429]);
      // A valid credential has a bucket of its own.
      const token = (await identity.signIn(await identity.addUser("OWNER"))).token;
      expect((await supertest(fresh.app).get("/api/v1/client").set("authorization", `Bearer ${token}`)).status).toBe(200);
    } finally {
      await fresh.security.close();
    }
  });
});

describe("refusing over-budget callers before any lookup that costs I/O", () => {
  it("a flood of random well-formed svc_ keys from one address stops reaching the store and identity once over budget", async () => {
    const kv = new MemoryKvStore();
    const lookups = { kv: 0 };
    const counted = Object.create(kv) as KvStore;
    counted.get = (key) => ((lookups.kv += 1), kv.get(key));
    counted.getMany = (keys) => ((lookups.kv += 1), kv.getMany(keys));
    const identity = new FakeIdentity(kv);
    await identity.start();
    // A clock that stands still: the one key lookup an over-budget address is allowed per second is spent once.
    const now = Date.now();
    const gw = buildGateway(counted, identity.url, { RATE_LIMIT_MAX: 5, RATE_LIMIT_WINDOW_MS: 60_000 }, undefined, () => now);
    try {
      const owner = await identity.addUser("OWNER");
      const valid = await identity.createKey(owner, { scopes: ["clients.read"] });
      const token = (await identity.signIn(await identity.addUser("OWNER"))).token;
      // The valid key authenticates once (within the address's budget), so this gateway knows it.
      expect((await supertest(gw.app).get("/api/v1/client").set("x-api-key", valid.key)).status).toBe(200);

      const randomKey = () => generateApiKey();
      const statuses: number[] = [];
      for (let i = 0; i < 5; i++) statuses.push((await supertest(gw.app).get("/api/v1/client").set("x-api-key", randomKey())).status);
      expect(statuses).toEqual([401, 401, 401, 401, 401]);
      const under = identity.calls;
      expect(under).toBeGreaterThan(0);
      // Over budget, the address still gets one key looked up per second (a valid key it has not used
      // here yet keeps its own bucket); that lookup fails, and the request counts per address.
      const first = await supertest(gw.app).get("/api/v1/client").set("x-api-key", randomKey());
      expect([first.status, first.body.error.code]).toEqual([429, 429000]);
      expect(identity.calls).toBe(under + 1);
      const after = { kv: lookups.kv, identity: identity.calls };

      for (let i = 0; i < 50; i++) {
        const res = await supertest(gw.app).get("/api/v1/client").set("x-api-key", randomKey());
        expect([res.status, res.body.error.code]).toEqual([429, 429000]);
        expect(Number(res.headers["retry-after"])).toBeGreaterThan(0);
      }
      expect({ kv: lookups.kv, identity: identity.calls }).toEqual(after);

      // Valid credentials keep their own buckets: the known key and a JWT still pass.
      expect((await supertest(gw.app).get("/api/v1/client").set("x-api-key", valid.key)).status).toBe(200);
      expect((await supertest(gw.app).get("/api/v1/client").set("authorization", `Bearer ${token}`)).status).toBe(200);
      // A key that stops working is forgotten as "known" when it fails (its failure counts per address: 429).
      await identity.revokeKey(valid.digest);
      const revokedAt = lookups.kv;
      expect((await supertest(gw.app).get("/api/v1/client").set("x-api-key", valid.key)).status).toBe(429);
      expect(lookups.kv).toBeGreaterThan(revokedAt);
      const before = lookups.kv;
      expect((await supertest(gw.app).get("/api/v1/client").set("x-api-key", valid.key)).status).toBe(429);
      expect(lookups.kv).toBe(before);
    } finally {
      await gw.security.close();
      await identity.stop();
      await kv.close();
    }
  });

  it("a valid key not used at this gateway yet keeps its own bucket while its address is over budget", async () => {
    const kv = new MemoryKvStore();
    const identity = new FakeIdentity(kv);
    await identity.start();
    const gw = buildGateway(kv, identity.url, { RATE_LIMIT_MAX: 3, RATE_LIMIT_WINDOW_MS: 60_000 });
    try {
      const fresh = await identity.createKey(await identity.addUser("OWNER"), { scopes: ["clients.read"] });
      const anonymous: number[] = [];
      for (let i = 0; i < 4; i++) anonymous.push((await supertest(gw.app).get("/api/v1/client")).status);
      expect(anonymous).toEqual([401, 401, 401, 429]);
      // decisions §7: with a valid key, the request counts per key, whatever its address has spent.
      const res = await supertest(gw.app).get("/api/v1/client").set("x-api-key", fresh.key);
      expect(res.status).toBe(200);
      expect([res.headers["x-ratelimit-limit"], res.headers["x-ratelimit-remaining"]]).toEqual(["3", "2"]);
    } finally {
      await gw.security.close();
      await identity.stop();
      await kv.close();
    }
  });
});

describeRedis("gateway rate limit and revocation across instances on one Redis", () => {
  let kvA: KvStore;
  let kvB: KvStore;
  let identity: FakeIdentity;
  let one: Gateway;
  let two: Gateway;

  beforeAll(async () => {
    const prefix = `${uniqueName("sec")}:`;
    kvA = new RedisKvStore(testInfra.redisUrl!, prefix);
    kvB = new RedisKvStore(testInfra.redisUrl!, prefix);
    identity = new FakeIdentity(kvA);
    await identity.start();
    one = buildGateway(kvA, identity.url, { RATE_LIMIT_MAX: 4, RATE_LIMIT_WINDOW_MS: 2000 }, testInfra.redisUrl);
    two = buildGateway(kvB, identity.url, { RATE_LIMIT_MAX: 4, RATE_LIMIT_WINDOW_MS: 2000 }, testInfra.redisUrl);
  });
  afterAll(async () => {
    await one.security.close();
    await two.security.close();
    await identity.stop();
    await kvA.close();
    await kvB.close();
  });

  it("two instances spend one budget, and the window resets when X-RateLimit-Reset says", async () => {
    const token = (await identity.signIn(await identity.addUser("OWNER"))).token;
    const call = (gw: Gateway) => supertest(gw.app).get("/api/v1/client").set("authorization", `Bearer ${token}`);
    const seen: Array<[number, string]> = [];
    for (const gw of [one, two, one, two, one]) {
      const res = await call(gw);
      seen.push([res.status, String(res.headers["x-ratelimit-remaining"])]);
    }
    expect(seen).toEqual([
      [200, "3"],
      [200, "2"],
      [200, "1"],
      [200, "0"],
      [429, "0"],
    ]);
    const limited = await call(two);
    expect(limited.status).toBe(429);
    const resetMs = Number(limited.headers["x-ratelimit-reset"]) * 1000;
    // Epoch seconds, rounded up: at most the window plus one second away.
    expect(resetMs - Date.now()).toBeLessThanOrEqual(3050);
    // Polled, not slept: the window is a Redis key that expires on the server's clock. A refused call
    // counts in the old window only, which goes with it.
    const after = await waitFor(
      async () => {
        const answer = await call(two);
        return answer.status === 200 ? answer : undefined;
      },
      5_000,
      50,
    );
    expect(Date.now()).toBeLessThanOrEqual(resetMs + 2_000);
    expect(after.headers["x-ratelimit-remaining"]).toBe("3");
  });

  it("a revocation or demotion written by identity is seen by the other instance at once", async () => {
    const owner = await identity.addUser("OWNER");
    const { key, digest } = await identity.createKey(owner);
    const { token, sid } = await identity.signIn(owner);
    expect((await supertest(two.app).get("/api/v1/user").set("x-api-key", key)).status).toBe(200);
    expect((await supertest(two.app).get("/api/v1/user").set("authorization", `Bearer ${token}`)).status).toBe(200);
    await identity.revokeKey(digest);
    await identity.setRole(owner, "VIEWER");
    expect((await supertest(two.app).get("/api/v1/user").set("x-api-key", key)).body.error.code).toBe(401021);
    expect((await supertest(two.app).get("/api/v1/user").set("authorization", `Bearer ${token}`)).body.error.code).toBe(401014);
    await identity.revokeSession(sid);
    expect((await supertest(one.app).get("/api/v1/client").set("authorization", `Bearer ${token}`)).body.error.code).toBe(401011);
  });
});

describe("gateway with Redis unreachable", () => {
  it("fails authentication closed (503000) and the rate limit open, with a logged warning", async () => {
    const deadUrl = "redis://127.0.0.1:1";
    const kv = new RedisKvStore(deadUrl, "dead:");
    const gw = buildGateway(kv, "http://127.0.0.1:1", { RATE_LIMIT_MAX: 1 }, deadUrl);
    try {
      const token = `svc_${"d".repeat(40)}`;
      const auth = await supertest(gw.app).get("/api/v1/client").set("x-api-key", token);
      expect(auth.status).toBe(503);
      expect(auth.body).toEqual({ success: false, error: { code: 503000, message: "Service unavailable" } });
      for (let i = 0; i < 3; i++) expect((await supertest(gw.app).post("/api/v1/auth/sign-in")).status).toBe(200);
      expect(gw.logs.some((l) => l.includes("rate-limit store unavailable"))).toBe(true);
      expect(gw.logs.join("\n")).not.toContain(token);
    } finally {
      await gw.security.close();
      await kv.close();
    }
  }, 20_000);
});

describeRedis("the limiter on the auth-state store's Redis connection", () => {
  it("counts on that connection: the gateway holds one", async () => {
    const kv = new RedisKvStore(testInfra.redisUrl!, `${uniqueName("one-write")}:`);
    const identity = new FakeIdentity(kv);
    await identity.start();
    const gw = buildGateway(kv, identity.url, { RATE_LIMIT_MAX: 100 }, testInfra.redisUrl);
    try {
      const { token } = await identity.signIn(await identity.addUser("OWNER"));
      const list = () => supertest(gw.app).get("/api/v1/client").set("authorization", `Bearer ${token}`);
      // The first request loads the limiter's script.
      expect((await list()).status).toBe(200);
      const written: string[] = [];
      const stream = kv.redis.stream;
      const write = stream.write.bind(stream) as (...args: unknown[]) => boolean;
      stream.write = ((chunk: unknown, ...rest: unknown[]) => {
        written.push(String(chunk));
        return write(chunk, ...rest);
      }) as typeof stream.write;
      const res = await list();
      stream.write = write as typeof stream.write;
      expect(res.status).toBe(200);
      expect(res.headers["x-ratelimit-remaining"]).toBe("98");
      expect(written.some((chunk) => /\bmget\b/i.test(chunk))).toBe(true);
      expect(written.some((chunk) => /\bevalsha\b/i.test(chunk))).toBe(true);
    } finally {
      await gw.security.close();
      await identity.stop();
      await kv.close();
    }
  });
});

describe("the time-out of a shared connection", () => {
  it("a Redis that accepts and never answers: the limit fails open, authentication closed, after the time-out", async () => {
    const silent = net.createServer((socket) => socket.on("data", () => undefined));
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
    const url = `redis://127.0.0.1:${(silent.address() as AddressInfo).port}`;
    const kv = new RedisKvStore(url, "silent:");
    const gw = buildGateway(kv, "http://127.0.0.1:1", { RATE_LIMIT_MAX: 1 }, url);
    try {
      // Public: no auth read, only the count, which gives up and lets it through.
      const res = await supertest(gw.app).post("/api/v1/auth/sign-in");
      expect(res.status).toBe(200);
      expect(gw.logs.some((l) => l.includes("rate-limit store unavailable"))).toBe(true);
      // Protected: the auth read gives up as well, and authentication fails closed (503000), in bounded time.
      const started = Date.now();
      const jwt = new AccessTokenCodec(JWT_SECRET).sign({ sub: uuidv7(), businessId: uuidv7(), jti: uuidv7(), sid: uuidv7() }, 60);
      const refused = await supertest(gw.app).get("/api/v1/client").set("authorization", `Bearer ${jwt}`);
      expect({ status: refused.status, code: refused.body.error?.code, retryAfter: refused.headers["retry-after"] }).toEqual({ status: 503, code: 503000, retryAfter: "1" });
      expect(Date.now() - started).toBeLessThan(5_000);
    } finally {
      await gw.security.close();
      kv.redis.disconnect();
      await new Promise((resolve) => silent.close(resolve));
    }
  }, 20_000);
});
