// Identity's API key routes over HTTP (api-key.router.ts), roll and lastUsedAt included, on PGlite and PostgreSQL.
import { rolePermissions, type Principal } from "@crm/contracts";
import { describeEachMode } from "@crm/testing";
import { accountHelpers, sharedHarness, sha256 } from "./harness";

describeEachMode("identity: API keys on %s", (mode) => {
  const h = sharedHarness(mode);
  const { signUp } = accountHelpers(() => h);

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

  describe("allow-lists and own rate limits (extensions §E3.2)", () => {
    it("normalises allowedIps on create, keeps rateLimit, and publishes both to the gateways' store", async () => {
      const { principal } = await signUp();
      const res = await h.as(principal, "post", "/api/v1/api-key").send({
        name: "partner",
        allowedIps: ["203.0.113.7", "10.1.2.3/8", "2001:DB8::1", "::ffff:192.0.2.1", "203.0.113.7/32"],
        rateLimit: { max: 500, windowSeconds: 60 },
      });
      expect(res.status).toBe(201);
      const expected = { allowedIps: ["203.0.113.7/32", "10.0.0.0/8", "2001:db8::1/128", "192.0.2.1/32"], rateLimit: { max: 500, windowSeconds: 60 }, lastUsedIp: null };
      expect(res.body.data).toMatchObject(expected);
      expect((await h.as(principal, "get", `/api/v1/api-key/${res.body.data.id}`)).body.data).toMatchObject(expected);
      expect(await h.cache.readApiKey(sha256(res.body.data.key))).toMatchObject({ allowedIps: expected.allowedIps, rateLimit: expected.rateLimit });
      const plain = (await h.as(principal, "post", "/api/v1/api-key").send({ name: "plain" })).body.data;
      expect(plain).toMatchObject({ allowedIps: null, rateLimit: null, lastUsedIp: null });
      expect(await h.cache.readApiKey(sha256(plain.key))).toMatchObject({ allowedIps: null, rateLimit: null });
    });

    it("refuses a bad entry, an empty list and a limit beyond RATE_LIMIT_KEY_MAX with 400001 naming the field", async () => {
      const { principal } = await signUp();
      const create = (body: object) => h.as(principal, "post", "/api/v1/api-key").send({ name: "x", ...body });
      expect((await create({ allowedIps: ["192.0.2.1", "10.0.0.0/8", "x", "10.0.0.0/33"] })).body.error).toMatchObject({
        code: 400001,
        details: [{ path: "allowedIps.2" }, { path: "allowedIps.3" }],
      });
      expect((await create({ allowedIps: [] })).body.error).toMatchObject({ code: 400001, details: [{ path: "allowedIps" }] });
      expect((await create({ allowedIps: Array.from({ length: 51 }, (_, i) => `192.0.2.${i}`) })).body.error).toMatchObject({ code: 400001, details: [{ path: "allowedIps" }] });
      expect((await create({ rateLimit: { max: 1001, windowSeconds: 60 } })).body.error).toMatchObject({ code: 400001, details: [{ path: "rateLimit.max" }] });
      expect((await create({ rateLimit: { max: 0, windowSeconds: 60 } })).body.error).toMatchObject({ code: 400001, details: [{ path: "rateLimit.max" }] });
      expect((await create({ rateLimit: { max: 10, windowSeconds: 3601 } })).body.error).toMatchObject({ code: 400001, details: [{ path: "rateLimit.windowSeconds" }] });
      expect((await create({ rateLimit: { max: 1000, windowSeconds: 3600 } })).status).toBe(201);
      expect(await h.prisma.apiKey.count({ where: { businessId: principal.businessId } })).toBe(1);
    });

    it("PATCH changes name, allowedIps and rateLimit only, publishes at once, JWT only, and keeps tenants apart", async () => {
      const { principal } = await signUp();
      const { principal: stranger } = await signUp();
      const key = (await h.as(principal, "post", "/api/v1/api-key").send({ name: "a", scopes: ["clients.read"] })).body.data;
      const patch = (body: object, who: Principal = principal) => h.as(who, "patch", `/api/v1/api-key/${key.id}`).send(body);

      const changed = await patch({ allowedIps: ["198.51.100.0/24"], rateLimit: { max: 5, windowSeconds: 10 } });
      expect(changed.status).toBe(200);
      expect(changed.body.data).toMatchObject({ name: "a", scopes: ["clients.read"], allowedIps: ["198.51.100.0/24"], rateLimit: { max: 5, windowSeconds: 10 } });
      expect(changed.body.data.key).toBeUndefined();
      expect(await h.cache.readApiKey(sha256(key.key))).toMatchObject({ allowedIps: ["198.51.100.0/24"], rateLimit: { max: 5, windowSeconds: 10 } });

      const renamed = await patch({ name: "b" });
      expect(renamed.body.data).toMatchObject({ name: "b", allowedIps: ["198.51.100.0/24"], rateLimit: { max: 5, windowSeconds: 10 } });
      const cleared = await patch({ allowedIps: null, rateLimit: null });
      expect(cleared.body.data).toMatchObject({ name: "b", allowedIps: null, rateLimit: null });
      expect(await h.cache.readApiKey(sha256(key.key))).toMatchObject({ allowedIps: null, rateLimit: null });

      expect((await patch({ scopes: [] })).body.error.code).toBe(400001);
      expect((await patch({ expiresAt: null })).body.error.code).toBe(400001);
      expect((await patch({ allowedIps: ["nope"] })).body.error).toMatchObject({ code: 400001, details: [{ path: "allowedIps.0" }] });
      expect((await patch({ name: "c" }, stranger)).body.error.code).toBe(404001);
      const asKey = await patch({ name: "c" }, { ...principal, authType: "apiKey", userId: null, apiKeyId: key.id, sessionId: null, jti: null });
      expect(asKey.body.error.code).toBe(401014);
      expect((await h.as(principal, "get", `/api/v1/api-key/${key.id}`)).body.data.name).toBe("b");
    });

    it("a roll keeps the allow-list and the rate limit", async () => {
      const { principal } = await signUp();
      const key = (await h.as(principal, "post", "/api/v1/api-key").send({ name: "a", allowedIps: ["192.0.2.0/24"], rateLimit: { max: 7, windowSeconds: 30 } })).body.data;
      const rolled = await h.as(principal, "post", `/api/v1/api-key/${key.id}/roll`).send({});
      expect(rolled.body.data).toMatchObject({ allowedIps: ["192.0.2.0/24"], rateLimit: { max: 7, windowSeconds: 30 } });
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

      // lastUsedIp moves with lastUsedAt; a report without one (a gateway before §E3.2) keeps it.
      const t3 = new Date(Date.now() - 500).toISOString();
      await agent
        .post("/internal/auth/api-keys/used")
        .set("x-internal-token", token)
        .send({ uses: [{ id: a.id, at: t3, ip: "203.0.113.9" }] });
      expect((await h.as(principal, "get", `/api/v1/api-key/${a.id}`)).body.data).toMatchObject({ lastUsedAt: t3, lastUsedIp: "203.0.113.9" });
      await report([{ id: a.id, at: new Date(Date.now() - 100).toISOString() }]);
      expect((await h.as(principal, "get", `/api/v1/api-key/${a.id}`)).body.data.lastUsedIp).toBe("203.0.113.9");

      expect((await report([{ id: a.id, at: "yesterday" }])).status).toBe(400);
      expect((await agent.post("/internal/auth/api-keys/used").send({ uses: [] })).status).toBe(401);
    });
  });
});
