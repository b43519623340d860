// Revocation is retry-safe (issue 16 item 5): when the write-through to the shared store fails, the
// client is told to retry (503000) instead of 200, and the retry publishes the revoked state even
// though the database already says revoked, so the gateways refuse the key (or session) from then on.
import { digestApiKey } from "@crm/auth-cache";
import { preferredMode } from "@crm/testing";
import { FlakyKvStore } from "./flaky-kv-store";
import { openHarness, PASSWORD, uniqueEmail, type Harness } from "./harness";

jest.setTimeout(120_000);

const keyEntries = (key: string) => key.startsWith("auth:key:");

describe("API key revocation when the store fails", () => {
  let h: Harness;
  let kv: FlakyKvStore;

  beforeAll(async () => {
    kv = new FlakyKvStore();
    h = await openHarness(preferredMode, {}, { kv });
  });
  afterAll(async () => {
    await h?.close();
  });
  afterEach(() => {
    kv.failWritesTo = undefined;
  });

  async function ownerWithKey() {
    const up = await h.pub("/api/v1/auth/sign-up").send({ businessName: "Acme", email: uniqueEmail("owner"), password: PASSWORD });
    expect(up.status).toBe(201);
    const owner = await h.principalOf(up.body.data.accessToken);
    const created = await h.as(owner, "post", "/api/v1/api-key").send({ name: "sync", scopes: ["clients.read"] });
    expect(created.status).toBe(201);
    const digest = digestApiKey(created.body.data.key);
    // What every gateway reads for this key: active.
    expect(await h.cache.readApiKey(digest)).toMatchObject({ revoked: false });
    return { owner, id: created.body.data.id as string, digest };
  }

  it("answers 503000 while the revoked state cannot be published, and a retry repairs the cache", async () => {
    const { owner, id, digest } = await ownerWithKey();

    kv.failWritesTo = keyEntries;
    for (const attempt of [1, 2]) {
      const failed = await h.as(owner, "delete", `/api/v1/api-key/${id}`);
      expect({ attempt, status: failed.status, body: failed.body }).toEqual({
        attempt,
        status: 503,
        body: { success: false, error: { code: 503000, message: "Service unavailable" } },
      });
    }
    // The database already says revoked; the gateways' cache still says active.
    expect((await h.prisma.apiKey.findUniqueOrThrow({ where: { id } })).revokedAt).not.toBeNull();
    expect(await h.cache.readApiKey(digest)).toMatchObject({ revoked: false });

    kv.failWritesTo = undefined;
    const retried = await h.as(owner, "delete", "/api/v1/api-key").send({ id });
    expect(retried.status).toBe(200);
    expect(retried.body.data).toMatchObject({ id, isActive: false });
    // Every gateway now reads the key as revoked and refuses it (401021).
    expect(await h.cache.readApiKey(digest)).toMatchObject({ id, revoked: true });
  });

  it("every DELETE publishes the revoked state, also of a key already revoked", async () => {
    const { owner, id, digest } = await ownerWithKey();
    expect((await h.as(owner, "delete", `/api/v1/api-key/${id}`)).status).toBe(200);
    // A stale entry (e.g. a cache fill that read the database before the revocation) is overwritten.
    const stale = (await h.kv.get(`auth:key:${digest}`))!.replace('"revoked":true', '"revoked":false');
    await h.kv.set(`auth:key:${digest}`, stale);
    expect(await h.cache.readApiKey(digest)).toMatchObject({ revoked: false });
    expect((await h.as(owner, "delete", `/api/v1/api-key/${id}`)).status).toBe(200);
    expect(await h.cache.readApiKey(digest)).toMatchObject({ revoked: true });
  });

  it("deleting the key's creator is retry-safe in the same way", async () => {
    const { owner, digest } = await ownerWithKey();
    const email = uniqueEmail("admin");
    const admin = await h.as(owner, "post", "/api/v1/user").send({ email, password: PASSWORD, role: "ADMIN" });
    const signIn = await h.pub("/api/v1/auth/sign-in").send({ email, password: PASSWORD });
    const adminPrincipal = await h.principalOf(signIn.body.data.accessToken);
    const adminKey = await h.as(adminPrincipal, "post", "/api/v1/api-key").send({ name: "admin's" });
    const adminDigest = digestApiKey(adminKey.body.data.key);

    kv.failWritesTo = keyEntries;
    expect((await h.as(owner, "delete", `/api/v1/user/${admin.body.data.id}`)).body.error.code).toBe(503000);
    expect(await h.cache.readApiKey(adminDigest)).toMatchObject({ revoked: false });
    kv.failWritesTo = undefined;
    expect((await h.as(owner, "delete", `/api/v1/user/${admin.body.data.id}`)).status).toBe(200);
    expect(await h.cache.readApiKey(adminDigest)).toMatchObject({ revoked: true });
    // The owner's own key was not touched.
    expect(await h.cache.readApiKey(digest)).toMatchObject({ revoked: false });
  });

  it("a logout whose allow-list cleanup fails answers 503000, and its retry ends the session", async () => {
    const email = uniqueEmail("leaver");
    const up = await h.pub("/api/v1/auth/sign-up").send({ businessName: "Acme", email, password: PASSWORD });
    const principal = await h.principalOf(up.body.data.accessToken);

    kv.failWritesTo = (key) => key.startsWith("auth:at:");
    expect((await h.as(principal, "post", "/api/v1/auth/logout")).body.error.code).toBe(503000);
    // The session is marked revoked, but the token is still on the allow-list: the gateway would take it.
    expect(await h.cache.allowedAccessToken(principal.jti!)).toBe(principal.sessionId);

    kv.failWritesTo = undefined;
    expect((await h.as(principal, "post", "/api/v1/auth/logout")).status).toBe(204);
    await expect(h.principalOf(up.body.data.accessToken)).rejects.toThrow("401011");
  });
});
