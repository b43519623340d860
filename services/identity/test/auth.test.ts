// Identity's auth routes over HTTP (sign-up, sign-in, refresh, logout, me: auth.router.ts) and what it keeps secret, on PGlite and PostgreSQL.
import { rolePermissions, type Principal } from "@crm/contracts";
import { describeEachMode } from "@crm/testing";
import { accountHelpers, cookieValue, sharedHarness, PASSWORD, refreshCookie, sha256, uniqueEmail } from "./harness";

describeEachMode("identity: sign-up, sign-in, sessions on %s", (mode) => {
  // The app's clock runs `ahead` of the real one: lock expiry is tested by moving it, not by waiting.
  let ahead = 0;
  const h = sharedHarness(mode, { clock: () => Date.now() + ahead });
  const { signUp } = accountHelpers(() => h);

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
      ahead += 1_100;
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
});
