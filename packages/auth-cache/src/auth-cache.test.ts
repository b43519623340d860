import { MemoryKvStore } from "@crm/kv-store";
import { rolePermissions, uuidv7 } from "@crm/contracts";
import {
  AccessTokenCodec,
  AuthCache,
  digestApiKey,
  effectivePermissions,
  generateApiKey,
  parseAccessTokenVerdicts,
  parseApiKeyAuthState,
  parseUserAuthState,
  API_KEY_PATTERN,
  REVOKED,
} from "./index";

describe("AccessTokenCodec", () => {
  const codec = new AccessTokenCodec("a-secret-that-is-long-enough-for-hs256-000000");
  const claims = { sub: uuidv7(), businessId: uuidv7(), jti: uuidv7(), sid: uuidv7() };

  it("round-trips claims and refuses expiry, other keys and tampering", () => {
    const token = codec.sign(claims, 60);
    expect(codec.verify(token)).toMatchObject(claims);
    expect(codec.verify(token, Date.now() + 61_000)).toBeUndefined();
    expect(new AccessTokenCodec("another-secret-that-is-long-enough-0000000").verify(token)).toBeUndefined();
    expect(codec.verify(`${token.slice(0, -2)}xx`)).toBeUndefined();
    expect(codec.verify("a.b.c")).toBeUndefined();
    expect(codec.verify("")).toBeUndefined();
  });

  it("is a standard HS256 JWT (header alg HS256, exp in seconds)", () => {
    const [header, payload] = codec.sign(claims, 1800).split(".");
    expect(JSON.parse(Buffer.from(header!, "base64url").toString())).toEqual({ alg: "HS256", typ: "JWT" });
    const body = JSON.parse(Buffer.from(payload!, "base64url").toString());
    expect(body.exp - body.iat).toBe(1800);
  });
});

describe("API key format", () => {
  it("is svc_ + 40 base62 characters and digests to SHA-256 hex", () => {
    const keys = new Set(Array.from({ length: 200 }, generateApiKey));
    expect(keys.size).toBe(200);
    for (const key of keys) expect(key).toMatch(API_KEY_PATTERN);
    expect(digestApiKey("svc_x")).toMatch(/^[0-9a-f]{64}$/);
  });
});

describe("auth state", () => {
  it("parses only well-formed entries", () => {
    expect(parseUserAuthState('{"v":1,"userId":"u","deleted":false,"businessId":"b","role":"ADMIN"}')).toMatchObject({ role: "ADMIN" });
    expect(parseUserAuthState('{"v":1,"userId":"u","deleted":false,"businessId":"b","role":"ROOT"}')).toBeUndefined();
    expect(parseUserAuthState("not json")).toBeUndefined();
    expect(parseApiKeyAuthState('{"v":1,"unknown":true}')).toEqual({ v: 1, unknown: true });
    expect(parseApiKeyAuthState('{"v":1,"unknown":false,"id":"k","businessId":"b","createdByUserId":"u","scopes":["nope"],"expiresAt":null,"revoked":false}')).toBeUndefined();
    const user = { v: 1, userId: "u", deleted: false, businessId: "b", role: "ADMIN" };
    expect(
      parseAccessTokenVerdicts(
        JSON.stringify({
          verdicts: [
            { jti: "a", live: true, user },
            { jti: "b", live: false },
          ],
        }),
      ),
    ).toEqual(
      new Map([
        ["a", { jti: "a", live: true, user }],
        ["b", { jti: "b", live: false }],
      ]),
    );
    expect(parseAccessTokenVerdicts(JSON.stringify({ verdicts: [{ jti: "a", live: true }] }))).toBeUndefined();
    expect(parseAccessTokenVerdicts(JSON.stringify({ verdicts: [{ jti: "a", live: "yes" }] }))).toBeUndefined();
    expect(parseAccessTokenVerdicts("[]")).toBeUndefined();
  });

  it("empty scopes = the creator's permissions; given scopes are cut to them", () => {
    expect(effectivePermissions("VIEWER", [])).toEqual(rolePermissions.VIEWER);
    expect(effectivePermissions("VIEWER", ["clients.read", "clients.create"])).toEqual(["clients.read"]);
  });

  it("revoking a session refuses all its access tokens, with tombstones", async () => {
    const kv = new MemoryKvStore();
    const cache = new AuthCache(kv);
    await cache.allowAccessToken("j1", "s", 60_000);
    await cache.allowAccessToken("j2", "s", 60_000);
    await cache.allowAccessToken("j3", "other", 60_000);
    await cache.revokeSession("s", 60_000);
    expect(await cache.allowedAccessToken("j1")).toBeNull();
    expect(await cache.allowedAccessToken("j2")).toBeNull();
    expect((await cache.readAccessTokenAndUser("j1", "u")).entry).toBe(REVOKED);
    expect(await cache.allowedAccessToken("j3")).toBe("other");
    await kv.close();
  });

  it("withdrawing one access token leaves the session's others", async () => {
    const kv = new MemoryKvStore();
    const cache = new AuthCache(kv);
    await cache.allowAccessToken("j1", "s", 60_000);
    await cache.allowAccessToken("j2", "s", 60_000);
    await cache.withdrawAccessToken("j2", "s", 60_000);
    expect(await cache.allowedAccessToken("j1")).toBe("s");
    expect((await cache.readAccessTokenAndUser("j2", "u")).entry).toBe(REVOKED);
    expect(await kv.members("auth:sat:s")).toEqual(["j1"]);
    await kv.close();
  });

  it("a fill allows a token the cache does not know, and never one that was refused", async () => {
    const kv = new MemoryKvStore();
    const cache = new AuthCache(kv);
    expect((await cache.readAccessTokenAndUser("j1", "u")).entry).toBeNull();
    expect(await cache.fillAccessToken("j1", "s", 60_000)).toBe(true);
    expect(await cache.allowedAccessToken("j1")).toBe("s");
    // A second fill of the same token (another gateway's miss) agrees.
    expect(await cache.fillAccessToken("j1", "s", 60_000)).toBe(true);
    await cache.withdrawAccessToken("j2", "s", 60_000);
    expect(await cache.fillAccessToken("j2", "s", 60_000)).toBe(false);
    expect(await cache.allowedAccessToken("j2")).toBeNull();
    // A session revoked before a token of it was ever cached: the session's tombstone refuses the fill.
    await cache.revokeSession("s2", 60_000);
    expect(await cache.fillAccessToken("j3", "s2", 60_000)).toBe(false);
    expect(await cache.allowedAccessToken("j3")).toBeNull();
    await kv.close();
  });

  it("a fill never overwrites a write-through", async () => {
    const kv = new MemoryKvStore();
    const cache = new AuthCache(kv);
    await cache.writeUser({ v: 1, userId: "u", deleted: true });
    await cache.fillUser({ v: 1, userId: "u", deleted: false, businessId: "b", role: "OWNER" });
    expect(await cache.readUser("u")).toEqual({ v: 1, userId: "u", deleted: true });
    await kv.close();
  });
});
