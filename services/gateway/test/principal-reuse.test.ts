// The authenticator hands out one principal per caller while the caller's stored state is unchanged
// (docs/performance.md D9), and a new one the moment identity writes
// a change: reuse must never outlive the state it was built from.
import { MemoryKvStore } from "@crm/kv-store";
import { rolePermissions } from "@crm/contracts";
import { Authenticator } from "../src/security/authenticator";
import { IdentityClient } from "../src/security/identity-client";
import { FakeIdentity, INTERNAL_SECRET, JWT_SECRET } from "./support/security.fixture";

describe("principal reuse", () => {
  let kv: MemoryKvStore;
  let identity: FakeIdentity;
  let authenticator: Authenticator;

  beforeAll(async () => {
    kv = new MemoryKvStore();
    identity = new FakeIdentity(kv);
    await identity.start();
    authenticator = new Authenticator(JWT_SECRET, kv, new IdentityClient(identity.url, INTERNAL_SECRET));
  });
  afterAll(async () => {
    await identity.stop();
    await kv.close();
  });

  it("a JWT caller gets the same principal until its role changes, then one with the new permissions", async () => {
    const user = await identity.addUser("OWNER");
    const { token } = await identity.signIn(user);
    const first = await authenticator.authenticate({ kind: "jwt", token });
    expect(await authenticator.authenticate({ kind: "jwt", token })).toBe(first);
    expect(Object.isFrozen(first)).toBe(true);

    await identity.setRole(user, "VIEWER");
    const demoted = await authenticator.authenticate({ kind: "jwt", token });
    expect(demoted).not.toBe(first);
    expect(demoted.permissions).toEqual(rolePermissions.VIEWER);
    expect(first.permissions).toEqual(rolePermissions.OWNER);
  });

  it("an API key gets the same principal until it or its creator changes, and a revocation is refused at once", async () => {
    const creator = await identity.addUser("ADMIN");
    const { key, digest } = await identity.createKey(creator);
    const first = await authenticator.authenticate({ kind: "apiKey", key });
    expect(await authenticator.authenticate({ kind: "apiKey", key })).toBe(first);

    await identity.setRole(creator, "VIEWER");
    const demoted = await authenticator.authenticate({ kind: "apiKey", key });
    expect(demoted).not.toBe(first);
    expect(demoted.permissions).toEqual(rolePermissions.VIEWER);

    await identity.revokeKey(digest);
    await expect(authenticator.authenticate({ kind: "apiKey", key })).rejects.toMatchObject({ code: 401021 });
  });
});
