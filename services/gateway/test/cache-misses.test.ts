// The shared store caches identity's database (ARCHITECTURE.md, "The databases decide; Redis
// remembers"): a store that lost its entries costs a lookup through identity, never a session and
// never a revocation; misses of concurrent requests are asked together; and when the store or
// identity cannot be reached, every credential is answered 503000 with Retry-After, never a 401.
import supertest from "supertest";
import { AccessTokenCodec, authKeys, REVOKED } from "@crm/auth-cache";
import { uuidv7 } from "@crm/contracts";
import { type KvStore, MemoryKvStore, RedisKvStore } from "@crm/kv-store";
import { renderMetrics } from "@crm/telemetry";
import { buildGateway, FakeIdentity, JWT_SECRET, type Gateway } from "./support/security.fixture";

/** A store that can restart empty, as a Redis without persistence does. */
class RestartableKvStore implements KvStore {
  private inner = new MemoryKvStore();

  async restartEmpty(): Promise<void> {
    const old = this.inner;
    this.inner = new MemoryKvStore();
    await old.close();
  }

  get = (key: string) => this.inner.get(key);
  getMany = (keys: readonly string[]) => this.inner.getMany(keys);
  set = (key: string, value: string, ttlMs?: number) => this.inner.set(key, value, ttlMs);
  setIfAbsent = (key: string, value: string, ttlMs: number) => this.inner.setIfAbsent(key, value, ttlMs);
  del = (...keys: string[]) => this.inner.del(...keys);
  increment = (key: string, ttlMs: number) => this.inner.increment(key, ttlMs);
  addToSet = (key: string, member: string, ttlMs?: number) => this.inner.addToSet(key, member, ttlMs);
  removeFromSet = (key: string, member: string) => this.inner.removeFromSet(key, member);
  members = (key: string) => this.inner.members(key);
  ping = () => this.inner.ping();
  close = () => this.inner.close();
}

describe("the store is a cache of identity's database", () => {
  let kv: RestartableKvStore;
  let identity: FakeIdentity;
  let gw: Gateway;

  beforeAll(async () => {
    kv = new RestartableKvStore();
    identity = new FakeIdentity(kv);
    await identity.start();
    gw = buildGateway(kv, identity.url, { RATE_LIMIT_MAX: 100_000 });
  });
  afterAll(async () => {
    await gw.security.close();
    await identity.stop();
    await kv.close();
  });

  const list = (headers: Record<string, string>) => supertest(gw.app).get("/api/v1/client").set(headers);
  const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

  it("a store restarted empty signs no one out: the first request asks identity, which fills the store", async () => {
    const owner = await identity.addUser("OWNER");
    const viewer = await identity.addUser("VIEWER");
    const sessions = [await identity.signIn(owner), await identity.signIn(viewer)];
    const key = await identity.createKey(owner);
    for (const { token } of sessions) expect((await list(bearer(token))).status).toBe(200);

    await kv.restartEmpty();
    const asked = identity.accessTokenQueries.length;
    for (const { token, sid } of sessions) {
      const res = await list(bearer(token));
      expect(res.status).toBe(200);
      expect(res.body.data.principal.sessionId).toBe(sid);
    }
    expect((await list({ "x-api-key": key.key })).status).toBe(200);
    expect(identity.accessTokenQueries.length).toBe(asked + 2);
    // What the operator sees: the misses, by what was missing.
    const { body } = await renderMetrics();
    expect(body).toMatch(/crm_gateway_auth_cache_misses_total\{kind="access_token",result="ok"\} [1-9]/);
    expect(body).toMatch(/crm_gateway_auth_cache_misses_total\{kind="api_key",result="ok"\} [1-9]/);
    // Filled: the next requests are answered from the store alone.
    const calls = identity.calls;
    for (const { token } of sessions) expect((await list(bearer(token))).status).toBe(200);
    expect((await list({ "x-api-key": key.key })).status).toBe(200);
    expect(identity.calls).toBe(calls);
  });

  it("a session identity holds as revoked stays revoked when the store loses its tombstone", async () => {
    const user = await identity.addUser("OWNER");
    const { token, jti, sid } = await identity.signIn(user);
    expect((await list(bearer(token))).status).toBe(200);
    await identity.revokeSession(sid);
    expect((await list(bearer(token))).body.error.code).toBe(401011);

    await kv.restartEmpty();
    const refused = await list(bearer(token));
    expect(refused.status).toBe(401);
    expect(refused.body.error).toEqual({ code: 401011, message: "Access token not found in whitelist" });
    // Identity's answer is cached as a tombstone: the next refusal costs identity nothing.
    expect(await kv.get(authKeys.accessToken(jti))).toBe(REVOKED);
    const calls = identity.calls;
    expect((await list(bearer(token))).body.error.code).toBe(401011);
    expect(identity.calls).toBe(calls);
  });

  it("a token of a session identity never had is 401011, also when nothing is cached", async () => {
    const user = await identity.addUser("OWNER");
    const forged = new AccessTokenCodec(JWT_SECRET).sign({ sub: user.userId, businessId: user.businessId, jti: uuidv7(), sid: uuidv7() }, 60);
    expect((await list(bearer(forged))).body.error.code).toBe(401011);
    // A session of another user does not make it live either.
    const other = await identity.signIn(await identity.addUser("OWNER"), 1800, { cached: false });
    const crossed = new AccessTokenCodec(JWT_SECRET).sign({ sub: user.userId, businessId: user.businessId, jti: uuidv7(), sid: other.sid }, 60);
    expect((await list(bearer(crossed))).body.error.code).toBe(401011);
  });

  it("the misses of concurrent requests reach identity together, each token once", async () => {
    const owner = await identity.addUser("OWNER");
    const sessions = await Promise.all(Array.from({ length: 60 }, () => identity.signIn(owner)));
    await kv.restartEmpty();
    const before = identity.accessTokenQueries.length;
    // Every token three times at once: one question per token, in a few requests.
    const answers = await Promise.all(sessions.flatMap(({ token }) => [list(bearer(token)), list(bearer(token)), list(bearer(token))]));
    expect(answers.map((a) => a.status)).toEqual(answers.map(() => 200));
    const asked = identity.accessTokenQueries.slice(before);
    const jtis = asked.flat().map((q) => q.jti);
    expect(new Set(jtis).size).toBe(jtis.length);
    expect(jtis.sort()).toEqual(sessions.map((s) => s.jti).sort());
    expect(asked.length).toBeLessThanOrEqual(10);
    for (const batch of asked) expect(batch.length).toBeLessThanOrEqual(100);
  });
});

describe("a dependency the gateway cannot reach is 503000 with Retry-After, never a verdict", () => {
  const expectUnavailable = (res: supertest.Response) => {
    expect({ status: res.status, body: res.body, retryAfter: res.headers["retry-after"] }).toEqual({
      status: 503,
      body: { success: false, error: { code: 503000, message: "Service unavailable" } },
      retryAfter: "1",
    });
  };

  it("identity unreachable on a miss: every credential the store does not know is 503000; what it knows still works", async () => {
    const kv = new MemoryKvStore();
    const identity = new FakeIdentity(kv);
    const gw = buildGateway(kv, "http://127.0.0.1:1", { RATE_LIMIT_MAX: 100_000 });
    try {
      const owner = await identity.addUser("OWNER");
      const cached = await identity.signIn(owner);
      const uncached = await identity.signIn(owner, 1800, { cached: false });
      const unknownUser = await identity.signIn(await identity.addUser("OWNER", { cached: false }));
      const key = await identity.createKey(owner, { cached: false });
      const list = (headers: Record<string, string>) => supertest(gw.app).get("/api/v1/client").set(headers);
      expect((await list({ authorization: `Bearer ${cached.token}` })).status).toBe(200);
      expectUnavailable(await list({ authorization: `Bearer ${uncached.token}` }));
      expectUnavailable(await list({ authorization: `Bearer ${unknownUser.token}` }));
      expectUnavailable(await list({ "x-api-key": key.key }));
    } finally {
      await gw.security.close();
      await kv.close();
    }
  });

  it("the store unreachable: JWTs and API keys alike are 503000", async () => {
    const deadUrl = "redis://127.0.0.1:1";
    const kv = new RedisKvStore(deadUrl, "dead:");
    const gw = buildGateway(kv, "http://127.0.0.1:1", { RATE_LIMIT_MAX: 100 }, deadUrl);
    try {
      const token = new AccessTokenCodec(JWT_SECRET).sign({ sub: uuidv7(), businessId: uuidv7(), jti: uuidv7(), sid: uuidv7() }, 60);
      const list = (headers: Record<string, string>) => supertest(gw.app).get("/api/v1/client").set(headers);
      expectUnavailable(await list({ authorization: `Bearer ${token}` }));
      expectUnavailable(await list({ "x-api-key": `svc_${"e".repeat(40)}` }));
    } finally {
      await gw.security.close();
      await kv.close();
    }
  }, 20_000);
});
