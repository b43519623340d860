// The identity service's behaviour over HTTP, run on PGlite and on PostgreSQL (identity.*.test.ts).
import { createHash } from "node:crypto";
import { digestApiKey } from "@crm/auth-cache";
import { rolePermissions, type Principal } from "@crm/contracts";
import { cookieValue, openHarness, PASSWORD, refreshCookie, uniqueEmail, type Harness, type Mode } from "./harness";

const sha256 = (s: string) => createHash("sha256").update(s).digest("hex");

export function identitySuite(mode: Mode): void {
  let h: Harness;
  beforeAll(async () => {
    h = await openHarness(mode, { SIGN_IN_MAX_FAILURES: "3", SIGN_IN_LOCK_BASE_MS: "1000", SIGN_IN_LOCK_MAX_MS: "2000" });
  });
  afterAll(async () => {
    await h?.close();
  });

  async function signUp(email = uniqueEmail("owner")) {
    const res = await h.pub("/api/v1/auth/sign-up").send({ businessName: "Acme", email, password: PASSWORD, firstName: "Ada" });
    expect(res.status).toBe(201);
    const principal = await h.principalOf(res.body.data.accessToken);
    return { res, email, principal, accessToken: res.body.data.accessToken as string, refresh: cookieValue(refreshCookie(res)) };
  }

  async function addUser(owner: Principal, role: string) {
    const email = uniqueEmail(role.toLowerCase());
    const created = await h.as(owner, "post", "/api/v1/user").send({ email, password: PASSWORD, role });
    expect(created.status).toBe(201);
    const signIn = await h.pub("/api/v1/auth/sign-in").send({ email, password: PASSWORD });
    expect(signIn.status).toBe(200);
    return { user: created.body.data, principal: await h.principalOf(signIn.body.data.accessToken), accessToken: signIn.body.data.accessToken as string };
  }

  describe("sign-up", () => {
    it("creates a business and its OWNER, signs in, and sets the refresh cookie only as a cookie", async () => {
      const { res, principal } = await signUp();
      expect(res.body.success).toBe(true);
      expect(res.body.data.user).toMatchObject({ role: "OWNER", firstName: "Ada" });
      expect(Object.keys(res.body.data.business).sort()).toEqual(["createdAt", "id", "name"]);
      expect(JSON.stringify(res.body)).not.toContain(cookieValue(refreshCookie(res)));
      const cookie = refreshCookie(res)!;
      expect(cookie).toMatch(/; HttpOnly/);
      expect(cookie).toMatch(/; Path=\/api\/v1\/auth/);
      expect(cookie).toMatch(/; SameSite=Lax/);
      expect(cookie).toMatch(/; Max-Age=86400/);
      expect(cookie).not.toMatch(/Secure/);
      expect(principal.permissions).toEqual(rolePermissions.OWNER);
    });

    it("marks the cookie Secure unless the request was plain HTTP from loopback", async () => {
      const https = await h.pub("/api/v1/auth/sign-up", { proto: "https" }).send({ businessName: "B", email: uniqueEmail(), password: PASSWORD });
      expect(refreshCookie(https)).toMatch(/; Secure/);
      const remote = await h.pub("/api/v1/auth/sign-up", { address: "203.0.113.9" }).send({ businessName: "B", email: uniqueEmail(), password: PASSWORD });
      expect(refreshCookie(remote)).toMatch(/; Secure/);
    });

    it("refuses a taken email case-insensitively with 409001 and a short password with 400001", async () => {
      const { email } = await signUp();
      const again = await h.pub("/api/v1/auth/sign-up").send({ businessName: "X", email: email.toUpperCase(), password: PASSWORD });
      expect(again.status).toBe(409);
      expect(again.body).toEqual({ success: false, error: { code: 409001, message: "Resource already exists" } });
      const short = await h.pub("/api/v1/auth/sign-up").send({ businessName: "X", email: uniqueEmail(), password: "short" });
      expect(short.status).toBe(400);
      expect(short.body.error.code).toBe(400001);
      expect(short.body.error.details[0].path).toBe("password");
    });

    it("refuses public routes without an internal token", async () => {
      const res = await (await import("supertest")).default(h.app).post("/api/v1/auth/sign-in").send({ email: "a@b.co", password: "x" });
      expect(res.status).toBe(401);
      expect(res.body.error.code).toBe(401000);
    });
  });

  describe("sign-in", () => {
    it("accepts the email in any case and answers the token in the body and the refresh cookie", async () => {
      const { email } = await signUp();
      const res = await h.pub("/api/v1/auth/sign-in").send({ email: email.toLowerCase(), password: PASSWORD });
      expect(res.status).toBe(200);
      expect(typeof res.body.data.accessToken).toBe("string");
      expect(res.body.data.refreshToken).toBeUndefined();
      expect(refreshCookie(res)).toBeDefined();
    });

    it("answers a wrong email and a wrong password identically with 401001", async () => {
      const { email } = await signUp();
      const wrongPassword = await h.pub("/api/v1/auth/sign-in", { address: "198.51.100.1" }).send({ email, password: "not the password" });
      const wrongEmail = await h.pub("/api/v1/auth/sign-in", { address: "198.51.100.1" }).send({ email: uniqueEmail("nobody"), password: PASSWORD });
      for (const res of [wrongPassword, wrongEmail]) {
        expect(res.status).toBe(401);
        expect(res.body).toEqual({ success: false, error: { code: 401001, message: "Invalid credentials" } });
        expect(refreshCookie(res)).toBeUndefined();
      }
    });

    it("locks an (email, address) pair after repeated failures, not other addresses, and a success resets it", async () => {
      const { email } = await signUp();
      const attacker = "192.0.2.66";
      for (let i = 0; i < 3; i++) {
        expect((await h.pub("/api/v1/auth/sign-in", { address: attacker }).send({ email, password: "wrong password" })).status).toBe(401);
      }
      const locked = await h.pub("/api/v1/auth/sign-in", { address: attacker }).send({ email, password: PASSWORD });
      expect(locked.status).toBe(429);
      expect(locked.body.error).toEqual({ code: 429000, message: "Too many requests" });
      expect(Number(locked.headers["retry-after"])).toBeGreaterThanOrEqual(1);
      // The real user elsewhere is not locked out.
      expect((await h.pub("/api/v1/auth/sign-in", { address: "192.0.2.1" }).send({ email, password: PASSWORD })).status).toBe(200);
      // The lock is short-lived; the next success clears the count.
      await new Promise((r) => setTimeout(r, 1100));
      expect((await h.pub("/api/v1/auth/sign-in", { address: attacker }).send({ email, password: PASSWORD })).status).toBe(200);
      expect((await h.pub("/api/v1/auth/sign-in", { address: attacker }).send({ email, password: "wrong password" })).status).toBe(401);
      expect((await h.pub("/api/v1/auth/sign-in", { address: attacker }).send({ email, password: PASSWORD })).status).toBe(200);
    });

    it("answers 401015 for a user whose business is gone", async () => {
      const { email, principal } = await signUp();
      await h.prisma.user.update({ where: { id: principal.userId! }, data: { businessId: null } });
      const res = await h.pub("/api/v1/auth/sign-in").send({ email, password: PASSWORD });
      expect(res.status).toBe(401);
      expect(res.body.error).toEqual({ code: 401015, message: "Business access required" });
    });
  });

  describe("refresh and logout", () => {
    it("rotates the refresh token; reusing the old one revokes the whole session (401013)", async () => {
      const { refresh, principal } = await signUp();
      const first = await h.pub("/api/v1/auth/token/refresh", { cookie: `refreshToken=${refresh}` });
      expect(first.status).toBe(200);
      const rotated = cookieValue(refreshCookie(first));
      expect(rotated).not.toBe(refresh);
      const newAccess = first.body.data.accessToken as string;
      expect((await h.principalOf(newAccess)).sessionId).toBe(principal.sessionId);

      const reuse = await h.pub("/api/v1/auth/token/refresh", { cookie: `refreshToken=${refresh}` });
      expect(reuse.status).toBe(401);
      expect(reuse.body.error).toEqual({ code: 401013, message: "Invalid refresh token" });
      // The whole family is gone: the rotated refresh token and every live access token.
      const after = await h.pub("/api/v1/auth/token/refresh", { cookie: `refreshToken=${rotated}` });
      expect(after.body.error.code).toBe(401012);
      await expect(h.principalOf(newAccess)).rejects.toThrow("401011");
      expect(await h.cache.allowedAccessToken(principal.jti!)).toBeNull();
    });

    it("answers 401012 for a missing or unknown refresh token", async () => {
      const missing = await h.pub("/api/v1/auth/token/refresh");
      expect(missing.status).toBe(401);
      expect(missing.body.error).toEqual({ code: 401012, message: "Refresh token not found in whitelist" });
      const unknown = await h.pub("/api/v1/auth/token/refresh", { cookie: "refreshToken=nope" });
      expect(unknown.body.error.code).toBe(401012);
    });

    it("logout answers 204 with no body, ends both tokens and clears the cookie", async () => {
      const { refresh, principal } = await signUp();
      const res = await h.as(principal, "post", "/api/v1/auth/logout");
      expect(res.status).toBe(204);
      expect(res.text).toBe("");
      const cleared = refreshCookie(res)!;
      expect(cleared).toMatch(/^refreshToken=;/);
      expect(cleared).toMatch(/Max-Age=0/);
      expect(cleared).toMatch(/Path=\/api\/v1\/auth/);
      expect(await h.cache.allowedAccessToken(principal.jti!)).toBeNull();
      const refreshed = await h.pub("/api/v1/auth/token/refresh", { cookie: `refreshToken=${refresh}` });
      expect(refreshed.body.error.code).toBe(401012);
    });

    it("logout refuses an API key (401014)", async () => {
      const { principal } = await signUp();
      const keyPrincipal: Principal = { ...principal, authType: "apiKey", userId: null, apiKeyId: "k", sessionId: null, jti: null };
      const res = await h.as(keyPrincipal, "post", "/api/v1/auth/logout");
      expect(res.body.error.code).toBe(401014);
    });
  });

  describe("me", () => {
    it("describes a JWT caller and an API-key caller", async () => {
      const { principal } = await signUp();
      const jwt = await h.as(principal, "get", "/api/v1/auth/me");
      expect(jwt.status).toBe(200);
      expect(jwt.body.data).toMatchObject({ authType: "jwt", permissions: rolePermissions.OWNER, user: { id: principal.userId, role: "OWNER" } });
      expect(jwt.body.data.business.id).toBe(principal.businessId);
      const key = await h.as(
        { ...principal, authType: "apiKey", userId: null, apiKeyId: "k", sessionId: null, jti: null, permissions: ["clients.read"] },
        "get",
        "/api/v1/auth/me",
      );
      expect(key.body.data).toMatchObject({ authType: "apiKey", user: null, permissions: ["clients.read"] });
    });
  });

  describe("users", () => {
    it("creates users with role MEMBER by default, lists them newest first, and keeps tenants apart", async () => {
      const { principal: owner } = await signUp();
      const { principal: stranger } = await signUp();
      const created = await h.as(owner, "post", "/api/v1/user").send({ email: uniqueEmail("m"), password: PASSWORD });
      expect(created.status).toBe(201);
      expect(created.body.data).toMatchObject({ role: "MEMBER", businessId: owner.businessId });
      expect(created.body.data.passwordHash).toBeUndefined();
      const list = await h.as(owner, "get", "/api/v1/user?perPage=1");
      expect(list.body.meta).toEqual({ total: 2, lastPage: 2, currentPage: 1, perPage: 1, prev: null, next: 2 });
      expect(list.body.data[0].id).toBe(created.body.data.id);
      expect((await h.as(owner, "get", "/api/v1/user?perPage=500")).body.meta.perPage).toBe(100);
      expect((await h.as(owner, "get", "/api/v1/user?page=0")).body.error.code).toBe(400001);
      const foreign = await h.as(stranger, "get", `/api/v1/user/${created.body.data.id}`);
      expect(foreign.status).toBe(404);
      expect(foreign.body.error).toEqual({ code: 404001, message: "Resource not found" });
      expect((await h.as(stranger, "delete", `/api/v1/user/${created.body.data.id}`)).status).toBe(404);
      expect((await h.as(owner, "get", "/api/v1/user/not-a-uuid")).body.error.code).toBe(404001);
      const dup = await h.as(owner, "post", "/api/v1/user").send({ email: created.body.data.email.toUpperCase(), password: PASSWORD });
      expect(dup.body.error.code).toBe(409001);
      const unknownField = await h.as(owner, "post", "/api/v1/user").send({ email: uniqueEmail(), password: PASSWORD, businessId: stranger.businessId });
      expect(unknownField.body.error.code).toBe(400001);
    });

    it("checks permissions itself (401014) and never lets a caller grant more than it holds", async () => {
      const { principal: owner } = await signUp();
      const { principal: viewer } = await addUser(owner, "VIEWER");
      expect((await h.as(viewer, "get", "/api/v1/user")).body.error.code).toBe(401014);
      const limited: Principal = { ...owner, permissions: [...rolePermissions.MEMBER, "users.create"] };
      expect((await h.as(limited, "post", "/api/v1/user").send({ email: uniqueEmail(), password: PASSWORD, role: "ADMIN" })).body.error.code).toBe(401014);
    });

    it("a demotion is written through to the auth cache at once", async () => {
      const { principal: owner } = await signUp();
      const { user } = await addUser(owner, "ADMIN");
      const res = await h.as(owner, "patch", `/api/v1/user/${user.id}`).send({ role: "VIEWER", firstName: "Vi" });
      expect(res.status).toBe(200);
      expect(res.body.data).toMatchObject({ role: "VIEWER", firstName: "Vi" });
      expect(await h.cache.readUser(user.id)).toEqual({ v: 1, userId: user.id, deleted: false, businessId: owner.businessId, role: "VIEWER" });
    });

    it("deleting a user ends their sessions and revokes their keys at once", async () => {
      const { principal: owner } = await signUp();
      const { user, principal: admin } = await addUser(owner, "ADMIN");
      const key = await h.as(admin, "post", "/api/v1/api-key").send({ name: "admin's" });
      expect(key.status).toBe(201);
      const res = await h.as(owner, "delete", `/api/v1/user/${user.id}`);
      expect(res.status).toBe(200);
      expect(res.body.data.id).toBe(user.id);
      expect(await h.cache.readUser(user.id)).toEqual({ v: 1, userId: user.id, deleted: true });
      expect(await h.cache.allowedAccessToken(admin.jti!)).toBeNull();
      expect(await h.cache.readApiKey(digestApiKey(key.body.data.key))).toMatchObject({ revoked: true });
      expect((await h.as(owner, "get", `/api/v1/api-key/${key.body.data.id}`)).body.data.isActive).toBe(false);
    });

    it("a users.update key cannot take over the OWNER (401014), and nobody manages a user whose role they do not hold", async () => {
      const { principal: owner, email } = await signUp();
      // The key's principal as the gateway builds it: scopes cut to the creator's permissions.
      const narrowKey: Principal = { ...owner, authType: "apiKey", userId: null, apiKeyId: "k", sessionId: null, jti: null, permissions: ["users.read", "users.update"] };
      const takeover = await h.as(narrowKey, "patch", `/api/v1/user/${owner.userId}`).send({ password: "the attacker's password" });
      expect(takeover.status).toBe(401);
      expect(takeover.body.error).toEqual({ code: 401014, message: "Insufficient permissions for this action" });
      expect((await h.pub("/api/v1/auth/sign-in").send({ email, password: "the attacker's password" })).status).toBe(401);
      expect((await h.pub("/api/v1/auth/sign-in").send({ email, password: PASSWORD })).status).toBe(200);

      // Even a key with every permission never changes a password or an email; other fields it may.
      const { user: member } = await addUser(owner, "MEMBER");
      const fullKey: Principal = { ...narrowKey, permissions: [...rolePermissions.OWNER] };
      expect((await h.as(fullKey, "put", `/api/v1/user/${member.id}`).send({ password: "another long password" })).body.error.code).toBe(401014);
      expect((await h.as(fullKey, "patch", `/api/v1/user/${member.id}`).send({ email: uniqueEmail("moved") })).body.error.code).toBe(401014);
      expect((await h.as(fullKey, "patch", `/api/v1/user/${member.id}`).send({ email: member.email, firstName: "Mo" })).status).toBe(200);
      expect((await h.as(fullKey, "patch", `/api/v1/user/${member.id}`).send({ role: "VIEWER" })).status).toBe(200);

      // A user manager without ADMIN's permissions cannot touch an ADMIN nor create, promote to or delete one.
      const { user: admin } = await addUser(owner, "ADMIN");
      const manager: Principal = { ...owner, permissions: [...rolePermissions.MEMBER, "users.read", "users.create", "users.update", "users.delete"] };
      expect((await h.as(manager, "patch", `/api/v1/user/${admin.id}`).send({ firstName: "X" })).body.error.code).toBe(401014);
      expect((await h.as(manager, "delete", `/api/v1/user/${admin.id}`)).body.error.code).toBe(401014);
      expect((await h.as(manager, "patch", `/api/v1/user/${member.id}`).send({ role: "ADMIN" })).body.error.code).toBe(401014);
      expect((await h.as(manager, "patch", `/api/v1/user/${member.id}`).send({ password: "a new long password" })).status).toBe(200);
      expect((await h.as(manager, "delete", `/api/v1/user/${member.id}`)).status).toBe(200);
      expect((await h.as(owner, "get", `/api/v1/user/${admin.id}`)).body.data).toMatchObject({ role: "ADMIN", firstName: null });
    });

    it("never removes the last OWNER", async () => {
      const { principal: owner } = await signUp();
      const res = await h.as(owner, "delete", `/api/v1/user/${owner.userId}`);
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe(400001);
      expect((await h.as(owner, "patch", `/api/v1/user/${owner.userId}`).send({ role: "ADMIN" })).body.error.code).toBe(400001);
    });
  });

  describe("API keys", () => {
    it("creates a key shown once, stored only as a digest, with the first 12 characters as prefix", async () => {
      const { principal } = await signUp();
      const res = await h.as(principal, "post", "/api/v1/api-key").send({ name: "CI", scopes: ["clients.read"] });
      expect(res.status).toBe(201);
      const { key, keyPrefix, id } = res.body.data;
      expect(key).toMatch(/^svc_[A-Za-z0-9]{40}$/);
      expect(keyPrefix).toBe(key.slice(0, 12));
      expect(res.body.data).toMatchObject({ name: "CI", scopes: ["clients.read"], expiresAt: null, isActive: true });
      const row = await h.prisma.apiKey.findUniqueOrThrow({ where: { id } });
      expect(row.keyDigest).toBe(sha256(key));
      expect(JSON.stringify(row)).not.toContain(key);
      expect(await h.cache.readApiKey(sha256(key))).toMatchObject({ id, revoked: false, scopes: ["clients.read"] });
      const got = await h.as(principal, "get", `/api/v1/api-key/${id}`);
      expect(got.body.data.key).toBeUndefined();
      const list = await h.as(principal, "get", "/api/v1/api-key");
      expect(list.body.data[0].key).toBeUndefined();
    });

    it("validates scopes and expiresAt (400001) and refuses API-key callers (401014)", async () => {
      const { principal } = await signUp();
      const unknown = await h.as(principal, "post", "/api/v1/api-key").send({ name: "x", scopes: ["clients.fly"] });
      expect(unknown.body.error).toMatchObject({ code: 400001, details: [{ path: "scopes.0" }] });
      const notHeld: Principal = { ...principal, permissions: [...rolePermissions.MEMBER, "apiKeys.create"] };
      const beyond = await h.as(notHeld, "post", "/api/v1/api-key").send({ name: "x", scopes: ["clients.read", "users.read"] });
      expect(beyond.body.error).toMatchObject({ code: 400001, details: [{ path: "scopes.1" }] });
      const past = await h.as(principal, "post", "/api/v1/api-key").send({ name: "x", expiresAt: "2000-01-01T00:00:00Z" });
      expect(past.body.error).toMatchObject({ code: 400001, details: [{ path: "expiresAt" }] });
      const asKey = await h.as({ ...principal, authType: "apiKey", userId: null, apiKeyId: "k", sessionId: null, jti: null }, "post", "/api/v1/api-key").send({ name: "x" });
      expect(asKey.body.error.code).toBe(401014);
      const future = await h.as(principal, "post", "/api/v1/api-key").send({ name: "x", expiresAt: "2999-01-01T00:00:00.000Z" });
      expect(future.body.data.expiresAt).toBe("2999-01-01T00:00:00.000Z");
    });

    it("lists newest first with pagination meta", async () => {
      const { principal } = await signUp();
      for (const name of ["a", "b", "c"]) await h.as(principal, "post", "/api/v1/api-key").send({ name });
      const page = await h.as(principal, "get", "/api/v1/api-key?page=2&perPage=2");
      expect(page.body.meta).toEqual({ total: 3, lastPage: 2, currentPage: 2, perPage: 2, prev: 1, next: null });
      expect(page.body.data.map((k: { name: string }) => k.name)).toEqual(["a"]);
      expect((await h.as(principal, "get", "/api/v1/api-key?perPage=x")).body.error.code).toBe(400001);
    });

    it("revokes by body and by path, twice is 200, other tenants get 404001", async () => {
      const { principal } = await signUp();
      const { principal: stranger } = await signUp();
      const a = (await h.as(principal, "post", "/api/v1/api-key").send({ name: "a" })).body.data;
      const b = (await h.as(principal, "post", "/api/v1/api-key").send({ name: "b" })).body.data;
      expect((await h.as(stranger, "delete", "/api/v1/api-key").send({ id: a.id })).body.error.code).toBe(404001);
      const byBody = await h.as(principal, "delete", "/api/v1/api-key").send({ id: a.id });
      expect(byBody.status).toBe(200);
      expect(byBody.body.data).toMatchObject({ id: a.id, isActive: false });
      expect((await h.as(principal, "delete", "/api/v1/api-key").send({ id: a.id })).status).toBe(200);
      const byPath = await h.as(principal, "delete", `/api/v1/api-key/${b.id}`);
      expect(byPath.body.data).toMatchObject({ id: b.id, isActive: false });
      expect((await h.as(principal, "delete", `/api/v1/api-key/${b.id}`)).status).toBe(200);
      expect(await h.cache.readApiKey(sha256(b.key))).toMatchObject({ revoked: true });
      expect((await h.as(principal, "delete", "/api/v1/api-key").send({})).body.error.code).toBe(400001);
    });
  });

  describe("API key roll (extensions §E3)", () => {
    const createKey = async (principal: Principal, body: Record<string, unknown> = {}) => {
      const res = await h.as(principal, "post", "/api/v1/api-key").send({ name: "sync", ...body });
      expect(res.status).toBe(201);
      return res.body.data as { id: string; key: string; expiresAt: string | null };
    };

    it("makes a new key with the same name, scopes and expiresAt, and ends the old one after the overlap", async () => {
      const { principal } = await signUp();
      const old = await createKey(principal, { scopes: ["clients.read", "invoices.create"], expiresAt: "2999-01-01T00:00:00.000Z" });
      const before = Date.now();
      const res = await h.as(principal, "post", `/api/v1/api-key/${old.id}/roll`).send({ expiresInSeconds: 3600 });
      expect(res.status).toBe(201);
      const rolled = res.body.data;
      expect(rolled).toMatchObject({
        name: "sync",
        scopes: ["clients.read", "invoices.create"],
        expiresAt: "2999-01-01T00:00:00.000Z",
        isActive: true,
        lastUsedAt: null,
        createdByUserId: principal.userId,
      });
      expect(rolled.id).not.toBe(old.id);
      expect(rolled.key).toMatch(/^svc_[A-Za-z0-9]{40}$/);
      expect(rolled.key).not.toBe(old.key);
      expect(rolled.keyPrefix).toBe(rolled.key.slice(0, 12));

      const oldNow = (await h.as(principal, "get", `/api/v1/api-key/${old.id}`)).body.data;
      const ends = Date.parse(oldNow.expiresAt);
      expect(ends).toBeGreaterThanOrEqual(before + 3600_000 - 1000);
      expect(ends).toBeLessThanOrEqual(Date.now() + 3600_000 + 1000);
      expect(oldNow.isActive).toBe(true);
      // Written through: every gateway reads the new expiry from the shared store.
      expect(await h.cache.readApiKey(sha256(old.key))).toMatchObject({ id: old.id, expiresAt: oldNow.expiresAt, revoked: false });
      expect(await h.cache.readApiKey(sha256(rolled.key))).toMatchObject({ id: rolled.id, expiresAt: "2999-01-01T00:00:00.000Z", revoked: false });
    });

    it("defaults to a day's overlap, keeps an old expiry that is sooner, and 0 ends the old key at once", async () => {
      const { principal } = await signUp();
      const plain = await createKey(principal);
      expect((await h.as(principal, "post", `/api/v1/api-key/${plain.id}/roll`)).status).toBe(201);
      const defaulted = Date.parse((await h.as(principal, "get", `/api/v1/api-key/${plain.id}`)).body.data.expiresAt);
      expect(Math.abs(defaulted - (Date.now() + 86_400_000))).toBeLessThan(60_000);

      const soon = new Date(Date.now() + 600_000).toISOString();
      const expiring = await createKey(principal, { expiresAt: soon });
      const kept = await h.as(principal, "post", `/api/v1/api-key/${expiring.id}/roll`).send({ expiresInSeconds: 604_800 });
      expect(kept.body.data.expiresAt).toBe(soon);
      expect((await h.as(principal, "get", `/api/v1/api-key/${expiring.id}`)).body.data.expiresAt).toBe(soon);

      const now = await createKey(principal);
      expect((await h.as(principal, "post", `/api/v1/api-key/${now.id}/roll`).send({ expiresInSeconds: 0 })).status).toBe(201);
      const state = await h.cache.readApiKey(sha256(now.key));
      expect(state && !state.unknown && Date.parse(state.expiresAt!)).toBeLessThanOrEqual(Date.now());
      // Expired now: rolling it again is 409005.
      const again = await h.as(principal, "post", `/api/v1/api-key/${now.id}/roll`).send({});
      expect(again.status).toBe(409);
      expect(again.body).toEqual({ success: false, error: { code: 409005, message: "API key is not active" } });
    });

    it("answers 409005 for a revoked key, 404001 for another business's or an unknown key, 400001 for a bad overlap, 401014 for API keys", async () => {
      const { principal } = await signUp();
      const { principal: stranger } = await signUp();
      const key = await createKey(principal);
      expect((await h.as(stranger, "post", `/api/v1/api-key/${key.id}/roll`)).body.error.code).toBe(404001);
      expect((await h.as(principal, "post", "/api/v1/api-key/not-a-uuid/roll")).body.error.code).toBe(404001);
      for (const expiresInSeconds of [-1, 604_801, 1.5, "60"]) {
        const bad = await h.as(principal, "post", `/api/v1/api-key/${key.id}/roll`).send({ expiresInSeconds });
        expect(bad.body.error).toMatchObject({ code: 400001, details: [{ path: "expiresInSeconds" }] });
      }
      expect((await h.as(principal, "post", `/api/v1/api-key/${key.id}/roll`).send({ other: 1 })).body.error.code).toBe(400001);
      const asKey: Principal = { ...principal, authType: "apiKey", userId: null, apiKeyId: key.id, sessionId: null, jti: null };
      expect((await h.as(asKey, "post", `/api/v1/api-key/${key.id}/roll`)).body.error.code).toBe(401014);
      // Nothing above changed the key.
      expect((await h.as(principal, "get", `/api/v1/api-key/${key.id}`)).body.data.expiresAt).toBeNull();

      await h.as(principal, "delete", `/api/v1/api-key/${key.id}`);
      const revoked = await h.as(principal, "post", `/api/v1/api-key/${key.id}/roll`);
      expect([revoked.status, revoked.body.error.code]).toEqual([409, 409005]);
      expect(await h.prisma.apiKey.count({ where: { businessId: principal.businessId } })).toBe(1);
    });
  });

  describe("API key lastUsedAt (extensions §E3)", () => {
    it("records batched use reports: latest wins, never backwards, never in the future, unknown ids ignored", async () => {
      const { principal } = await signUp();
      const a = (await h.as(principal, "post", "/api/v1/api-key").send({ name: "a" })).body.data;
      const b = (await h.as(principal, "post", "/api/v1/api-key").send({ name: "b" })).body.data;
      expect(a.lastUsedAt).toBeNull();
      const agent = (await import("supertest")).default(h.app);
      const token = (await import("@crm/service-kit")).signInternalToken({}, h.internalSecret);
      const report = (uses: Array<{ id: string; at: string }>) => agent.post("/internal/auth/api-keys/used").set("x-internal-token", token).send({ uses });

      const t1 = new Date(Date.now() - 5000).toISOString();
      const t2 = new Date(Date.now() - 1000).toISOString();
      const res = await report([
        { id: a.id, at: t1 },
        { id: a.id, at: t2 },
        { id: b.id, at: t1 },
        { id: "00000000-0000-7000-8000-000000000000", at: t2 },
        { id: "nope", at: t2 },
      ]);
      expect(res.status).toBe(204);
      expect((await h.as(principal, "get", `/api/v1/api-key/${a.id}`)).body.data.lastUsedAt).toBe(t2);
      expect((await h.as(principal, "get", "/api/v1/api-key")).body.data.find((k: { id: string }) => k.id === b.id).lastUsedAt).toBe(t1);

      await report([{ id: a.id, at: t1 }]); // an older report from a slower gateway
      expect((await h.as(principal, "get", `/api/v1/api-key/${a.id}`)).body.data.lastUsedAt).toBe(t2);
      await report([{ id: b.id, at: new Date(Date.now() + 3_600_000).toISOString() }]); // a clock ahead
      expect(Date.parse((await h.as(principal, "get", `/api/v1/api-key/${b.id}`)).body.data.lastUsedAt)).toBeLessThanOrEqual(Date.now());

      expect((await report([{ id: a.id, at: "yesterday" }])).status).toBe(400);
      expect((await agent.post("/internal/auth/api-keys/used").send({ uses: [] })).status).toBe(401);
    });
  });

  describe("internal resolution", () => {
    it("fills the cache from the database on a miss", async () => {
      const { principal } = await signUp();
      const key = (await h.as(principal, "post", "/api/v1/api-key").send({ name: "k" })).body.data;
      await h.kv.del(`auth:user:${principal.userId}`, `auth:key:${sha256(key.key)}`);
      const agent = (await import("supertest")).default(h.app);
      const token = (await import("@crm/service-kit")).signInternalToken({}, h.internalSecret);
      const user = await agent.get(`/internal/auth/users/${principal.userId}`).set("x-internal-token", token);
      expect(user.body).toMatchObject({ userId: principal.userId, deleted: false, role: "OWNER" });
      expect(await h.cache.readUser(principal.userId!)).toMatchObject({ role: "OWNER" });
      const resolved = await agent
        .post("/internal/auth/api-keys/resolve")
        .set("x-internal-token", token)
        .send({ digest: sha256(key.key) });
      expect(resolved.body).toMatchObject({ id: key.id, revoked: false });
      const unknown = await agent
        .post("/internal/auth/api-keys/resolve")
        .set("x-internal-token", token)
        .send({ digest: sha256("svc_nope") });
      expect(unknown.body).toEqual({ v: 1, unknown: true });
      expect((await agent.get(`/internal/auth/users/${principal.userId}`)).status).toBe(401);
    });
  });

  describe("secrets", () => {
    it("stores only digests and hashes, and logs no secret", async () => {
      const email = uniqueEmail("secret");
      const password = "a very secret passphrase 42";
      const up = await h.pub("/api/v1/auth/sign-up").send({ businessName: "S", email, password });
      const refresh = cookieValue(refreshCookie(up));
      const principal = await h.principalOf(up.body.data.accessToken);
      const key = (await h.as(principal, "post", "/api/v1/api-key").send({ name: "k" })).body.data.key as string;
      await h.pub("/api/v1/auth/sign-in").send({ email, password: "wrong wrong wrong" });
      const refreshed = await h.pub("/api/v1/auth/token/refresh", { cookie: `refreshToken=${refresh}` });

      const user = await h.prisma.user.findFirstOrThrow({ where: { id: principal.userId! } });
      expect(user.passwordHash).toMatch(/^scrypt\$10\$8\$1\$/);
      expect(user.passwordHash).not.toContain(password);
      const tokens = await h.prisma.refreshToken.findMany({ where: { sessionId: principal.sessionId! } });
      expect(tokens.map((t) => t.digest).sort()).toEqual([sha256(refresh), sha256(cookieValue(refreshCookie(refreshed)))].sort());
      const secrets = [password, refresh, key, up.body.data.accessToken, refreshed.body.data.accessToken, cookieValue(refreshCookie(refreshed))];
      const logText = h.logs.join("\n");
      expect(logText.length).toBeGreaterThan(0);
      for (const secret of secrets) expect(logText).not.toContain(secret);
    });
  });
}
