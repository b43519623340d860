// Identity's user routes over HTTP (user.router.ts), on PGlite and PostgreSQL.
import { digestApiKey } from "@crm/auth-cache";
import { rolePermissions, type Principal } from "@crm/contracts";
import { describeEachMode } from "@crm/testing";
import { accountHelpers, sharedHarness, PASSWORD, SUITE_ENV, uniqueEmail } from "./harness";

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
      expect(await h.cache.readUser(user.id)).toEqual({ v: 1, userId: user.id, deleted: false, businessId: owner.businessId, role: "VIEWER", label: user.email });
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

  // Extensions §E10 (issue 35 items 2 and 3).
  describe("credentials: only a signed-in user sets them, and one's own need the current password", () => {
    const signIn = async (email: string, password = PASSWORD) => (await h.pub("/api/v1/auth/sign-in").send({ email, password })).status;
    /** Whether the session of `principal` is still signed in (its access token accepted). */
    const live = (principal: Principal) =>
      h.principalOf(h.codec.sign({ sub: principal.userId!, businessId: principal.businessId, jti: principal.jti!, sid: principal.sessionId! }, 60)).then(
        () => true,
        () => false,
      );

    it("an API key never creates a user, whatever its permissions (401014), so it cannot become one", async () => {
      const { principal: owner } = await signUp();
      const fullKey: Principal = { ...owner, authType: "apiKey", userId: null, apiKeyId: "k", sessionId: null, jti: null, permissions: [...rolePermissions.OWNER] };
      const email = uniqueEmail("planted");
      const res = await h.as(fullKey, "post", "/api/v1/user").send({ email, password: PASSWORD, role: "OWNER" });
      expect([res.status, res.body.error]).toEqual([401, { code: 401014, message: "Insufficient permissions for this action" }]);
      expect(await signIn(email)).toBe(401);
    });

    it("every signed-in user changes their own name without users.update; not their role, nor anyone else", async () => {
      const { principal: owner } = await signUp();
      for (const role of ["MEMBER", "VIEWER"]) {
        const { user, principal } = await addUser(owner, role);
        const renamed = await h.as(principal, "patch", `/api/v1/user/${user.id}`).send({ firstName: "Ada", lastName: "Byron" });
        expect([renamed.status, renamed.body.data?.firstName, renamed.body.data?.lastName]).toEqual([200, "Ada", "Byron"]);
        expect((await h.as(principal, "put", `/api/v1/user/${user.id}`).send({ lastName: null })).body.data.lastName).toBeNull();
        for (const body of [{ role }, { role: "OWNER" }, { firstName: "X", role: "VIEWER" }]) {
          expect((await h.as(principal, "patch", `/api/v1/user/${user.id}`).send(body)).body.error.code).toBe(401014);
        }
        expect((await h.as(principal, "patch", `/api/v1/user/${owner.userId}`).send({ firstName: "X" })).body.error.code).toBe(401014);
        expect((await h.as(owner, "get", `/api/v1/user/${user.id}`)).body.data).toMatchObject({ role, firstName: "Ada", lastName: null });
      }
    });

    it("one's own password needs currentPassword (missing 400001, wrong 401001) and ends every other session, not the caller's", async () => {
      const { principal: owner } = await signUp();
      const { user, principal: here } = await addUser(owner, "VIEWER");
      const elsewhere = await h.principalOf((await h.pub("/api/v1/auth/sign-in").send({ email: user.email, password: PASSWORD })).body.data.accessToken);
      const change = (body: object) => h.as(here, "patch", `/api/v1/user/${user.id}`).send(body);

      const missing = await change({ password: "a brand new password" });
      expect([missing.status, missing.body.error]).toEqual([
        400,
        { code: 400001, message: "Validation failed", details: [{ path: "currentPassword", message: "Required to change your own password or email" }] },
      ]);
      const wrong = await change({ password: "a brand new password", currentPassword: "not my password" });
      expect([wrong.status, wrong.body.error]).toEqual([401, { code: 401001, message: "Invalid credentials" }]);
      expect(await signIn(user.email, "a brand new password")).toBe(401);
      expect([await live(here), await live(elsewhere)]).toEqual([true, true]);

      const changed = await change({ password: "a brand new password", currentPassword: PASSWORD });
      expect(changed.status).toBe(200);
      expect([await live(here), await live(elsewhere)]).toEqual([true, false]);
      expect([await signIn(user.email), await signIn(user.email, "a brand new password")]).toEqual([401, 200]);
    });

    it("one's own email needs currentPassword too and ends the other sessions; the same email is no change", async () => {
      const { principal: owner, email: ownerEmail } = await signUp();
      const elsewhere = await h.principalOf((await h.pub("/api/v1/auth/sign-in").send({ email: ownerEmail, password: PASSWORD })).body.data.accessToken);
      const self = `/api/v1/user/${owner.userId}`;
      const current = (await h.as(owner, "get", self)).body.data.email as string;
      expect((await h.as(owner, "patch", self).send({ email: current, firstName: "Same" })).status).toBe(200);
      const moved = uniqueEmail("moved");
      expect((await h.as(owner, "patch", self).send({ email: moved })).body.error.details).toEqual([{ path: "currentPassword", message: expect.any(String) }]);
      expect((await h.as(owner, "patch", self).send({ email: moved, currentPassword: "wrong password" })).body.error.code).toBe(401001);
      expect([await live(owner), await live(elsewhere)]).toEqual([true, true]);
      expect((await h.as(owner, "patch", self).send({ email: moved, currentPassword: PASSWORD })).body.data.email).toBe(moved);
      expect([await live(owner), await live(elsewhere)]).toEqual([true, false]);
      expect([await signIn(ownerEmail), await signIn(moved)]).toEqual([401, 200]);
    });

    it("an administrator sets another user's password without theirs, ending all of that user's sessions", async () => {
      const { principal: owner } = await signUp();
      const { user, principal: member } = await addUser(owner, "MEMBER");
      const res = await h.as(owner, "patch", `/api/v1/user/${user.id}`).send({ password: "reset by the owner" });
      expect(res.status).toBe(200);
      expect([await live(member), await live(owner)]).toEqual([false, true]);
      expect(await signIn(user.email, "reset by the owner")).toBe(200);
      // Another user's email: no password needed, and their sessions are left alone.
      const { principal: viewer, user: viewerUser } = await addUser(owner, "VIEWER");
      expect((await h.as(owner, "patch", `/api/v1/user/${viewerUser.id}`).send({ email: uniqueEmail("renamed") })).status).toBe(200);
      expect(await live(viewer)).toBe(true);
    });

    it("wrong current passwords count as failed sign-ins: the (email, address) pair locks (429000 with Retry-After)", async () => {
      const { principal: owner } = await signUp();
      const { user, principal } = await addUser(owner, "MEMBER");
      const attempt = () =>
        h.as(principal, "patch", `/api/v1/user/${user.id}`).set("x-forwarded-for", "198.51.100.7").send({ password: "a brand new password", currentPassword: "guess" });
      const codes: number[] = [];
      for (let i = 0; i < Number(SUITE_ENV.SIGN_IN_MAX_FAILURES) + 1; i++) codes.push((await attempt()).body.error.code);
      expect(codes).toEqual([401001, 401001, 401001, 429000]);
      const locked = await h
        .as(principal, "patch", `/api/v1/user/${user.id}`)
        .set("x-forwarded-for", "198.51.100.7")
        .send({ password: "a brand new password", currentPassword: PASSWORD });
      expect([locked.status, locked.headers["retry-after"]]).toEqual([429, expect.stringMatching(/^\d+$/)]);
      expect((await h.pub("/api/v1/auth/sign-in", { address: "198.51.100.7" }).send({ email: user.email, password: PASSWORD })).status).toBe(429);
      expect(await signIn(user.email)).toBe(200);
    });
  });
});
