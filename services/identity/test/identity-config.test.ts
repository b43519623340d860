// Behaviour that depends on configuration: token lifetimes, closed sign-up, the production hash cost.
import crypto from "node:crypto";
import supertest from "supertest";
import { INTERNAL_CAPABILITIES_PATH, INTERNAL_TOKEN_HEADER } from "@crm/contracts";
import { signInternalToken } from "@crm/service-kit";
import { PasswordHasher } from "../src/domain/password-hasher";
import { cookieValue, openHarness, PASSWORD, refreshCookie, uniqueEmail, type Harness } from "./harness";

describe("identity with short token lifetimes and closed sign-up", () => {
  let h: Harness;
  // The app's clock: expiry is tested by moving it, not by waiting for it.
  let now = Date.now();
  beforeAll(async () => {
    h = await openHarness("pglite", { ACCESS_TOKEN_TTL_S: "3", REFRESH_TOKEN_TTL_S: "3" }, { clock: () => now });
  });
  afterAll(() => h?.close());

  it("expires the access token and its allow-list entry, and the refresh token, after their TTLs", async () => {
    const res = await h.pub("/api/v1/auth/sign-up").send({ businessName: "T", email: uniqueEmail(), password: PASSWORD });
    const access = res.body.data.accessToken as string;
    const claims = h.codec.verify(access, now)!;
    expect(claims.exp - claims.iat).toBe(3);
    expect(refreshCookie(res)).toMatch(/Max-Age=3;/);
    expect(await h.cache.allowedAccessToken(claims.jti)).not.toBeNull();
    expect(h.codec.verify(access, now + 1_900)).toBeDefined(); // exp is whole seconds: iat rounds down
    now += 3_100;
    expect(h.codec.verify(access, now)).toBeUndefined();
    expect(await h.cache.allowedAccessToken(claims.jti)).toBeNull();
    const refreshed = await h.pub("/api/v1/auth/token/refresh", { cookie: `refreshToken=${cookieValue(refreshCookie(res))}` });
    expect(refreshed.body.error.code).toBe(401012);
  });

  it("reports the settings it runs with to the gateway, and only behind the internal token", async () => {
    const res = await supertest(h.app).get(INTERNAL_CAPABILITIES_PATH).set(INTERNAL_TOKEN_HEADER, signInternalToken({}, h.internalSecret));
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ accessTokenTtlS: 3, refreshTokenTtlS: 3, signUpOpen: true, apiKeyRateLimitMax: 1000 });
    expect((await supertest(h.app).get(INTERNAL_CAPABILITIES_PATH)).status).toBe(401);
  });

  it("closes sign-up with 403000 when ALLOW_SIGN_UP=false", async () => {
    const closed = await openHarness("pglite", { ALLOW_SIGN_UP: "false" });
    try {
      const res = await closed.pub("/api/v1/auth/sign-up").send({ businessName: "T", email: uniqueEmail(), password: PASSWORD });
      expect(res.status).toBe(403);
      expect(res.body).toEqual({ success: false, error: { code: 403000, message: "Forbidden resource" } });
    } finally {
      await closed.close();
    }
  });
});

describe("password hashing", () => {
  it("hashes at OWASP strength (scrypt N=2^17, r=8, p=1) without hitting scrypt's memory limit", async () => {
    const hasher = new PasswordHasher(17, { concurrency: 2, queue: 16 });
    const hash = await hasher.hash(PASSWORD);
    expect(hash).toMatch(/^scrypt\$17\$8\$1\$/);
    expect(await hasher.verify(PASSWORD, hash)).toBe(true);
    expect(await hasher.verify("something else", hash)).toBe(false);
  });

  // Not a timed assert (a loaded machine makes those flaky): the time of a check is the scrypt it
  // runs, so both paths must run exactly one scrypt at the same cost.
  it("does the same scrypt work for an unknown user as for a wrong password", async () => {
    const hasher = new PasswordHasher(14, { concurrency: 2, queue: 16 });
    const stored = await hasher.hash(PASSWORD);
    await hasher.verifyAgainstDummy("warm up");
    const scrypt = jest.spyOn(crypto, "scrypt");
    try {
      const costs = async (check: () => Promise<boolean>) => {
        scrypt.mockClear();
        expect(await check()).toBe(false);
        return scrypt.mock.calls.map(([, , keyLength, options]) => ({ keyLength, options }));
      };
      const wrongPassword = await costs(() => hasher.verify("wrong password!", stored));
      const noUser = await costs(() => hasher.verifyAgainstDummy("wrong password!"));
      expect(wrongPassword).toHaveLength(1);
      expect(wrongPassword[0]).toMatchObject({ keyLength: 32, options: { N: 2 ** 14, r: 8, p: 1 } });
      expect(noUser).toEqual(wrongPassword);
    } finally {
      scrypt.mockRestore();
    }
  });
});
