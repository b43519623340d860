// Identity's internal routes the gateways call on a cache miss (internal.router.ts), on PGlite and PostgreSQL.
import { describeEachMode } from "@crm/testing";
import { accountHelpers, sharedHarness, sha256 } from "./harness";

describeEachMode("identity: internal resolution on %s", (mode) => {
  const h = sharedHarness(mode);
  const { signUp } = accountHelpers(() => h);

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
});
