// Identity's internal routes the gateways call on a cache miss (internal.router.ts), on PGlite and PostgreSQL.
import { authKeys, REVOKED } from "@crm/auth-cache";
import { MemoryKvStore } from "@crm/kv-store";
import { describeEachMode, internalCaller, preferredMode } from "@crm/testing";
import { accountHelpers, openHarness, PASSWORD, sharedHarness, sha256, uniqueEmail, type Harness } from "./harness";

/** What a gateway sends for a verified token on a miss. */
function query(h: Harness, accessToken: string) {
  const { jti, sid, sub, exp } = h.codec.verify(accessToken)!;
  return { jti, sessionId: sid, userId: sub, exp };
}

const resolve = (h: Harness, tokens: object[]) => internalCaller(h.app, undefined).post("/internal/auth/access-tokens/resolve").send({ tokens });

describeEachMode("identity: internal resolution on %s", (mode) => {
  const h = sharedHarness(mode);
  const { signUp, addUser } = accountHelpers(() => h);

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

    it("answers from the database whether access tokens' sessions are live, and caches each answer", async () => {
      const { principal, accessToken } = await signUp();
      const member = await addUser(principal, "MEMBER");
      const ended = await signUp();
      expect((await h.as(ended.principal, "post", "/api/v1/auth/logout")).status).toBe(204);
      // The store lost everything of these tokens (a Redis restarted empty).
      for (const p of [principal, member.principal, ended.principal]) {
        await h.kv.del(authKeys.accessToken(p.jti!), authKeys.sessionAccessTokens(p.sessionId!), authKeys.revokedSession(p.sessionId!), authKeys.user(p.userId!));
      }
      const crossed = { ...query(h, member.accessToken), jti: "j-crossed", userId: principal.userId };
      const res = await resolve(h, [query(h, accessToken), query(h, member.accessToken), query(h, ended.accessToken), crossed]);
      expect(res.status).toBe(200);
      expect(res.body.verdicts).toEqual([
        // label: the user's email, the audit log's actor label (extensions §E7).
        {
          jti: principal.jti,
          live: true,
          user: { v: 1, userId: principal.userId, deleted: false, businessId: principal.businessId, role: "OWNER", label: expect.stringMatching(/@example\.com$/i) },
        },
        { jti: member.principal.jti, live: true, user: expect.objectContaining({ userId: member.principal.userId, role: "MEMBER" }) },
        { jti: ended.principal.jti, live: false },
        // A token naming another user's session is not live.
        { jti: "j-crossed", live: false },
      ]);
      expect(await h.cache.allowedAccessToken(principal.jti!)).toBe(principal.sessionId);
      expect(await h.cache.readUser(principal.userId!)).toMatchObject({ role: "OWNER" });
      expect(await h.kv.get(authKeys.accessToken(ended.principal.jti!))).toBe(REVOKED);
      // Unknown or malformed sessions are simply not live.
      const unknown = await resolve(h, [
        { ...query(h, accessToken), jti: "j-unknown", sessionId: "0190c3a0-0000-7000-8000-000000000000" },
        { ...query(h, accessToken), jti: "j-malformed", sessionId: "not-a-uuid" },
      ]);
      expect(unknown.body.verdicts).toEqual([
        { jti: "j-unknown", live: false },
        { jti: "j-malformed", live: false },
      ]);
    });

    it("refuses a request it cannot read, and more than 100 tokens at once (400001)", async () => {
      const { accessToken } = await signUp();
      const many = Array.from({ length: 101 }, () => query(h, accessToken));
      expect((await resolve(h, many)).body.error.code).toBe(400001);
      expect((await resolve(h, [{ jti: "x" }])).body.error.code).toBe(400001);
      expect((await internalCaller(h.app, undefined).post("/internal/auth/access-tokens/resolve").send({})).body.error.code).toBe(400001);
    });
  });
});

/** The store's writes and reads as identity makes them, with a hook that runs before one read. */
class HookedKvStore extends MemoryKvStore {
  beforeGet: ((key: string) => Promise<void>) | undefined;
  override async get(key: string): Promise<string | null> {
    const hook = this.beforeGet;
    if (hook) await hook(key);
    return super.get(key);
  }
}

describe("a fill whose database read came before a logout", () => {
  let h: Harness;
  let kv: HookedKvStore;
  beforeAll(async () => {
    kv = new HookedKvStore();
    h = await openHarness(preferredMode, {}, { kv });
  });
  afterAll(async () => {
    await h?.close();
  });

  it("is withdrawn before the gateway is answered, even when the store lost the logout's tombstones in between", async () => {
    const up = await h.pub("/api/v1/auth/sign-up").send({ businessName: "Acme", email: uniqueEmail("late"), password: PASSWORD });
    const accessToken = up.body.data.accessToken as string;
    const principal = await h.principalOf(accessToken);
    await kv.del(authKeys.accessToken(principal.jti!), authKeys.sessionAccessTokens(principal.sessionId!));
    // Between the fill's database read (live) and its write: the logout runs to its end, then the
    // store loses everything it wrote (a restart), so the fill finds no tombstone and writes.
    kv.beforeGet = async (key) => {
      if (key !== authKeys.revokedSession(principal.sessionId!)) return;
      kv.beforeGet = undefined;
      expect((await h.as(principal, "post", "/api/v1/auth/logout")).status).toBe(204);
      await kv.del(authKeys.accessToken(principal.jti!), authKeys.revokedSession(principal.sessionId!), authKeys.sessionAccessTokens(principal.sessionId!));
    };
    const res = await resolve(h, [query(h, accessToken)]);
    expect(res.body.verdicts).toEqual([{ jti: principal.jti, live: false }]);
    expect(await kv.get(authKeys.accessToken(principal.jti!))).toBe(REVOKED);
  });
});
