// Authentication and permission at the edge: every 401xxx code, credential precedence, scopes,
// the cache-miss path through identity, and no credential in any log line.
import supertest from "supertest";
import { AccessTokenCodec, AUTH_STATE_TTL_MS } from "@crm/auth-cache";
import { recordResources, actions, uuidv7, type Permission, type Principal } from "@crm/contracts";
import { MemoryKvStore } from "@crm/kv-store";
import { buildGateway, FakeIdentity, JWT_SECRET, type Gateway } from "./support/security.fixture";

const RECORD_PATH: Record<(typeof recordResources)[number], string> = {
  clients: "client",
  contacts: "contact",
  invoices: "invoice",
  quotes: "quote",
  products: "product",
  services: "service",
  employees: "employee",
};

function requestFor(permission: Permission): { method: "get" | "post" | "patch" | "delete"; path: string } {
  const [resource, action] = permission.split(".") as [keyof typeof RECORD_PATH, string];
  const base = `/api/v1/${RECORD_PATH[resource]}`;
  const id = "0190c3a0-0000-7000-8000-000000000000";
  if (action === "read") return { method: "get", path: base };
  if (action === "create") return { method: "post", path: base };
  if (action === "update") return { method: "patch", path: `${base}/${id}` };
  return { method: "delete", path: `${base}/${id}` };
}

describe("gateway authentication", () => {
  let kv: MemoryKvStore;
  let identity: FakeIdentity;
  let gw: Gateway;
  const secrets: string[] = [];
  /** How far the gateway's clock runs ahead of the real one (expiry is tested by moving it). */
  let ahead = 0;

  beforeAll(async () => {
    kv = new MemoryKvStore();
    identity = new FakeIdentity(kv);
    await identity.start();
    gw = buildGateway(kv, identity.url, { RATE_LIMIT_MAX: 100_000 }, undefined, () => Date.now() + ahead);
  });
  afterAll(async () => {
    await gw.security.close();
    await identity.stop();
    await kv.close();
  });

  const get = (path: string) => supertest(gw.app).get(path);
  const expectError = (res: supertest.Response, status: number, code: number, message: string) => {
    expect({ status: res.status, body: res.body }).toEqual({ status, body: { success: false, error: { code, message } } });
  };

  it("401000 without credentials on a protected route; public routes need none", async () => {
    expectError(await get("/api/v1/client"), 401, 401000, "Authentication required");
    const pub = await supertest(gw.app).post("/api/v1/auth/sign-in");
    expect(pub.status).toBe(200);
    expect(pub.body.data.principal).toBeNull();
  });

  it("401010 for a malformed, badly signed, expired or non-bearer token", async () => {
    const user = await identity.addUser("OWNER");
    const { token } = await identity.signIn(user);
    const otherKey = new AccessTokenCodec("another-secret-that-is-long-enough-000000000").sign({ sub: user.userId, businessId: user.businessId, jti: uuidv7(), sid: uuidv7() }, 60);
    const expired = new AccessTokenCodec(JWT_SECRET).sign({ sub: user.userId, businessId: user.businessId, jti: uuidv7(), sid: uuidv7() }, 60, Date.now() - 120_000);
    const [h, p] = token.split(".");
    const noneAlg = `${Buffer.from('{"alg":"none","typ":"JWT"}').toString("base64url")}.${p}.`;
    const tampered = `${h}.${Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(p!, "base64url").toString()), sub: uuidv7() })).toString("base64url")}.${token.split(".")[2]}`;
    for (const auth of ["Bearer garbage", `Bearer ${otherKey}`, `Bearer ${expired}`, `Bearer ${noneAlg}`, `Bearer ${tampered}`, "Basic dXNlcjpwYXNz", "Bearer"]) {
      expectError(await get("/api/v1/client").set("authorization", auth), 401, 401010, "Invalid access token");
    }
    secrets.push(token);
  });

  it("401011 for a well-formed token that is not (or no longer) on the allow-list", async () => {
    const user = await identity.addUser("OWNER");
    const notListed = new AccessTokenCodec(JWT_SECRET).sign({ sub: user.userId, businessId: user.businessId, jti: uuidv7(), sid: uuidv7() }, 60);
    expectError(await get("/api/v1/client").set("authorization", `Bearer ${notListed}`), 401, 401011, "Access token not found in whitelist");
    const { token, sid } = await identity.signIn(user);
    expect((await get("/api/v1/client").set("authorization", `Bearer ${token}`)).status).toBe(200);
    await identity.revokeSession(sid);
    expect((await get("/api/v1/client").set("authorization", `Bearer ${token}`)).body.error.code).toBe(401011);
    secrets.push(token, notListed);
  });

  it("401015 for a signed-in user without a business", async () => {
    const user = await identity.addUser("OWNER", { businessId: null });
    const { token } = await identity.signIn(user);
    expectError(await get("/api/v1/client").set("authorization", `Bearer ${token}`), 401, 401015, "Business access required");
  });

  it("builds the principal from the user's current role, read through identity on a cache miss", async () => {
    const user = await identity.addUser("VIEWER", { cached: false });
    const { token, jti, sid } = await identity.signIn(user);
    const before = identity.calls;
    const res = await get("/api/v1/client").set("authorization", `Bearer ${token}`);
    expect(res.status).toBe(200);
    const principal: Principal = res.body.data.principal;
    expect(principal).toEqual({
      businessId: user.businessId,
      authType: "jwt",
      userId: user.userId,
      apiKeyId: null,
      sessionId: sid,
      jti,
      permissions: recordResources.map((r) => `${r}.read`),
    });
    expect(identity.calls).toBe(before + 1);
    await get("/api/v1/client").set("authorization", `Bearer ${token}`);
    expect(identity.calls).toBe(before + 1);
    // A demotion written through by identity applies on the next request.
    expectError(await supertest(gw.app).post("/api/v1/client").set("authorization", `Bearer ${token}`), 401, 401014, "Insufficient permissions for this action");
    await identity.setRole(user, "MEMBER");
    expect((await supertest(gw.app).post("/api/v1/client").set("authorization", `Bearer ${token}`)).status).toBe(200);
  });

  it("a deleted user's token is refused at once (401011)", async () => {
    const user = await identity.addUser("OWNER");
    const { token } = await identity.signIn(user);
    await identity.cache.writeUser({ v: 1, userId: user.userId, deleted: true });
    expect((await get("/api/v1/client").set("authorization", `Bearer ${token}`)).body.error.code).toBe(401011);
  });

  it("401022 for an unknown or malformed key, 401021 revoked, 401020 expired", async () => {
    const owner = await identity.addUser("OWNER");
    expectError(await get("/api/v1/client").set("x-api-key", `svc_${"A".repeat(40)}`), 401, 401022, "Invalid API key");
    expectError(await get("/api/v1/client").set("x-api-key", "svc_short"), 401, 401022, "Invalid API key");
    const revoked = await identity.createKey(owner);
    await identity.revokeKey(revoked.digest);
    expectError(await get("/api/v1/client").set("x-api-key", revoked.key), 401, 401021, "API key has been revoked");
    const expired = await identity.createKey(owner, { expiresAt: new Date(Date.now() - 1000).toISOString() });
    expectError(await get("/api/v1/client").set("x-api-key", expired.key), 401, 401020, "API key has expired");
    const soon = await identity.createKey(owner, { expiresAt: new Date(Date.now() + 60_000).toISOString() });
    expect((await get("/api/v1/client").set("x-api-key", soon.key)).status).toBe(200);
    ahead += 61_000; // the gateway's clock, moved past the key's expiry instead of waiting for it
    expect((await get("/api/v1/client").set("x-api-key", soon.key)).body.error.code).toBe(401020);
    ahead = 0;
    secrets.push(revoked.key, expired.key, soon.key);
  });

  it("resolves keys through identity on a miss and remembers unknown keys briefly", async () => {
    const owner = await identity.addUser("OWNER");
    const { key, id } = await identity.createKey(owner, { cached: false });
    const before = identity.calls;
    const res = await get("/api/v1/client").set("x-api-key", key);
    expect(res.body.data.principal).toMatchObject({ authType: "apiKey", apiKeyId: id, userId: null, businessId: owner.businessId, sessionId: null, jti: null });
    await get("/api/v1/client").set("x-api-key", key);
    expect(identity.calls).toBe(before + 1);
    const unknown = `svc_${"b".repeat(40)}`;
    await get("/api/v1/client").set("x-api-key", unknown);
    await get("/api/v1/client").set("x-api-key", unknown);
    expect(identity.calls).toBe(before + 2);
    expect(AUTH_STATE_TTL_MS).toBeGreaterThan(0);
    secrets.push(key);
  });

  it("X-Api-Key wins over Authorization, and `Bearer svc_...` is an API key", async () => {
    const owner = await identity.addUser("OWNER");
    const { key, id } = await identity.createKey(owner);
    const { token } = await identity.signIn(owner);
    const both = await get("/api/v1/client").set("x-api-key", key).set("authorization", `Bearer ${token}`);
    expect(both.body.data.principal.apiKeyId).toBe(id);
    const badKeyGoodJwt = await get("/api/v1/client")
      .set("x-api-key", `svc_${"c".repeat(40)}`)
      .set("authorization", `Bearer ${token}`);
    expect(badKeyGoodJwt.body.error.code).toBe(401022);
    const bearerKey = await get("/api/v1/client").set("authorization", `Bearer ${key}`);
    expect(bearerKey.body.data.principal).toMatchObject({ authType: "apiKey", apiKeyId: id });
    secrets.push(key, token);
  });

  it("each scope allows exactly its action (401014 for every other)", async () => {
    const owner = await identity.addUser("OWNER");
    const recordPermissions = recordResources.flatMap((r) => actions.map((a) => `${r}.${a}` as Permission));
    for (const scope of recordPermissions) {
      const { key } = await identity.createKey(owner, { scopes: [scope] });
      for (const other of recordPermissions) {
        const { method, path } = requestFor(other);
        const res = await supertest(gw.app)[method](path).set("x-api-key", key);
        if (other === scope) expect(res.status).toBe(200);
        else expect([other, res.body.error?.code]).toEqual([other, 401014]);
      }
    }
  });

  it("empty scopes act with the creator's current permissions; given scopes are cut to them", async () => {
    const admin = await identity.addUser("ADMIN");
    const all = await identity.createKey(admin);
    const scoped = await identity.createKey(admin, { scopes: ["clients.read", "webhooks.create"] });
    expect((await get("/api/v1/user").set("x-api-key", all.key)).status).toBe(200);
    expect((await get("/api/v1/webhook").set("x-api-key", scoped.key)).body.error.code).toBe(401014);
    await identity.setRole(admin, "MEMBER");
    expect((await get("/api/v1/user").set("x-api-key", all.key)).body.error.code).toBe(401014);
    expect((await supertest(gw.app).post("/api/v1/client").set("x-api-key", all.key)).status).toBe(200);
    const me = await get("/api/v1/auth/me").set("x-api-key", scoped.key);
    expect(me.body.data.principal.permissions).toEqual(["clients.read"]);
    await identity.cache.writeUser({ v: 1, userId: admin.userId, deleted: true });
    expect((await get("/api/v1/client").set("x-api-key", all.key)).body.error.code).toBe(401021);
  });

  it("refuses API keys on JWT-only routes (401014) and checks the route's permission for JWTs", async () => {
    const owner = await identity.addUser("OWNER");
    const { key } = await identity.createKey(owner);
    expectError(await supertest(gw.app).post("/api/v1/api-key").set("x-api-key", key), 401, 401014, "Insufficient permissions for this action");
    const { token } = await identity.signIn(owner);
    expect((await supertest(gw.app).post("/api/v1/api-key").set("authorization", `Bearer ${token}`)).status).toBe(200);
    const member = await identity.addUser("MEMBER");
    const memberToken = (await identity.signIn(member)).token;
    expect((await supertest(gw.app).post("/api/v1/api-key").set("authorization", `Bearer ${memberToken}`)).body.error.code).toBe(401014);
  });

  it("lets every signed-in user through to PATCH or PUT their own user, and only them (extensions §E10)", async () => {
    const owner = await identity.addUser("OWNER");
    const member = await identity.addUser("MEMBER", { businessId: owner.businessId });
    const viewer = await identity.addUser("VIEWER", { businessId: owner.businessId });
    const { key } = await identity.createKey(owner);
    const memberKey = (await identity.createKey(member)).key;
    const bearer = async (user: typeof owner) => ({ authorization: `Bearer ${(await identity.signIn(user)).token}` });
    const asked: Array<[string, number, unknown]> = [];
    const ask = async (name: string, method: "patch" | "put", id: string, credential: Record<string, string>) => {
      const res = await supertest(gw.app)[method](`/api/v1/user/${id}`).set(credential);
      asked.push([name, res.status, res.status === 200 ? res.body.data.route : res.body.error.code]);
    };
    for (const [name, user] of [
      ["member", member],
      ["viewer", viewer],
    ] as const) {
      await ask(`${name}, own user`, "patch", user.userId, await bearer(user));
      await ask(`${name}, own user (PUT)`, "put", `${user.userId}/`, await bearer(user));
      await ask(`${name}, the owner`, "patch", owner.userId, await bearer(user));
    }
    await ask("the member's key, the member", "patch", member.userId, { "x-api-key": memberKey });
    await ask("the owner, anyone", "patch", viewer.userId, await bearer(owner));
    await ask("the owner's key, anyone", "patch", viewer.userId, { "x-api-key": key });
    expect(asked).toEqual([
      ["member, own user", 200, "PATCH /user/:id"],
      ["member, own user (PUT)", 200, "PUT /user/:id"],
      ["member, the owner", 401, 401014],
      ["viewer, own user", 200, "PATCH /user/:id"],
      ["viewer, own user (PUT)", 200, "PUT /user/:id"],
      ["viewer, the owner", 401, 401014],
      ["the member's key, the member", 401, 401014],
      ["the owner, anyone", 200, "PATCH /user/:id"],
      ["the owner's key, anyone", 200, "PATCH /user/:id"],
    ]);
    // Reading, deleting and creating users still need their permissions.
    expect((await get(`/api/v1/user/${member.userId}`).set(await bearer(member))).body.error.code).toBe(401014);
    expect(
      (
        await supertest(gw.app)
          .delete(`/api/v1/user/${member.userId}`)
          .set(await bearer(member))
      ).body.error.code,
    ).toBe(401014);
    // A new user always gets an email and a password: JWT only.
    expect((await supertest(gw.app).post("/api/v1/user").set("x-api-key", key)).body.error.code).toBe(401014);
    expect(
      (
        await supertest(gw.app)
          .post("/api/v1/user")
          .set(await bearer(owner))
      ).status,
    ).toBe(200);
  });

  it("unknown routes answer 404000 without authentication", async () => {
    const res = await get("/api/v1/nope");
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe(404000);
  });

  it("writes no credential to the logs", () => {
    const text = gw.logs.join("\n");
    expect(text.length).toBeGreaterThan(0);
    for (const secret of secrets) expect(text).not.toContain(secret);
  });
});
