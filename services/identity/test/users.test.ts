// Identity's user routes over HTTP (user.router.ts), on PGlite and PostgreSQL.
import { digestApiKey } from "@crm/auth-cache";
import { rolePermissions, type Principal } from "@crm/contracts";
import { describeEachMode } from "@crm/testing";
import { accountHelpers, sharedHarness, PASSWORD, uniqueEmail } from "./harness";

describeEachMode("identity: users on %s", (mode) => {
  const h = sharedHarness(mode);
  const { signUp, addUser } = accountHelpers(() => h);

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
});
