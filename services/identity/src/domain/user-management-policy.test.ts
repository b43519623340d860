import { rolePermissions, roles, type Permission, type Role } from "@crm/contracts";
import { mayManageUser, type UserManager } from "./user-management-policy";

const SELF = "0190c3a0-0000-7000-8000-000000000001";
const OTHER = "0190c3a0-0000-7000-8000-000000000002";

const jwt = (role: Role, userId = SELF): UserManager => ({ authType: "jwt", userId, permissions: [...rolePermissions[role]] });
const key = (permissions: readonly Permission[]): UserManager => ({ authType: "apiKey", userId: null, permissions: [...permissions] });
const target = (role: Role, id = OTHER) => ({ id, role });

describe("mayManageUser", () => {
  it("refuses the issue's reproduction: a users.read+users.update key resetting the OWNER's password", () => {
    const narrow = key(["users.read", "users.update"]);
    expect(mayManageUser(narrow, { action: "update", target: target("OWNER"), changesCredentials: true })).toBe(false);
    // Nor may it rename a VIEWER: it does not hold a VIEWER's permissions either.
    expect(mayManageUser(narrow, { action: "update", target: target("VIEWER"), changesCredentials: false })).toBe(false);
  });

  it("an API key never changes a password or an email, even with every permission", () => {
    const full = key(rolePermissions.OWNER);
    expect(mayManageUser(full, { action: "update", target: target("VIEWER"), changesCredentials: true })).toBe(false);
    expect(mayManageUser(full, { action: "update", target: target("VIEWER"), changesCredentials: false })).toBe(true);
    expect(mayManageUser(full, { action: "update", target: target("VIEWER"), role: "MEMBER", changesCredentials: false })).toBe(true);
  });

  it("an API key never creates a user: a new user always gets an email and a password (extensions §E10)", () => {
    for (const role of roles) expect(mayManageUser(key(rolePermissions.OWNER), { action: "create", role })).toBe(false);
  });

  it("every signed-in user may change their own name and credentials without users.update, but not their role nor anyone else (extensions §E10)", () => {
    for (const role of ["MEMBER", "VIEWER"] as const) {
      const self = target(role, SELF);
      expect(mayManageUser(jwt(role), { action: "update", target: self, changesCredentials: true })).toBe(true);
      expect(mayManageUser(jwt(role), { action: "update", target: self, changesCredentials: false })).toBe(true);
      expect(mayManageUser(jwt(role), { action: "update", target: self, role, changesCredentials: false })).toBe(false);
      expect(mayManageUser(jwt(role), { action: "update", target: self, role: "VIEWER", changesCredentials: false })).toBe(false);
      expect(mayManageUser(jwt(role), { action: "update", target: target("VIEWER"), changesCredentials: false })).toBe(false);
    }
    // A key is never "self", whatever user created it.
    expect(mayManageUser({ ...key(rolePermissions.MEMBER), userId: SELF }, { action: "update", target: target("MEMBER", SELF), changesCredentials: false })).toBe(false);
  });

  it("a JWT caller may change credentials of its own user and of users whose role it holds", () => {
    expect(mayManageUser(jwt("VIEWER"), { action: "update", target: target("VIEWER", SELF), changesCredentials: true })).toBe(true);
    expect(mayManageUser(jwt("ADMIN"), { action: "update", target: target("MEMBER"), changesCredentials: true })).toBe(true);
    expect(mayManageUser(jwt("MEMBER"), { action: "update", target: target("ADMIN"), changesCredentials: true })).toBe(false);
  });

  it("needs every permission of the target's current role and of the role assigned", () => {
    const manager: UserManager = { authType: "jwt", userId: SELF, permissions: [...rolePermissions.MEMBER, "users.update", "users.create", "users.delete"] };
    expect(mayManageUser(manager, { action: "update", target: target("MEMBER"), role: "VIEWER", changesCredentials: false })).toBe(true);
    expect(mayManageUser(manager, { action: "update", target: target("VIEWER"), role: "ADMIN", changesCredentials: false })).toBe(false);
    expect(mayManageUser(manager, { action: "update", target: target("ADMIN"), role: "VIEWER", changesCredentials: false })).toBe(false);
    expect(mayManageUser(manager, { action: "create", role: "MEMBER" })).toBe(true);
    expect(mayManageUser(manager, { action: "create", role: "OWNER" })).toBe(false);
    expect(mayManageUser(manager, { action: "delete", target: target("VIEWER") })).toBe(true);
    expect(mayManageUser(manager, { action: "delete", target: target("OWNER") })).toBe(false);
  });

  it("OWNER and ADMIN hold the same permissions (decisions §4), so each may manage the other", () => {
    for (const actor of ["OWNER", "ADMIN"] as const) {
      for (const role of roles) {
        expect(mayManageUser(jwt(actor), { action: "create", role })).toBe(true);
        expect(mayManageUser(jwt(actor), { action: "delete", target: target(role) })).toBe(true);
        expect(mayManageUser(jwt(actor), { action: "update", target: target(role), role: "OWNER", changesCredentials: true })).toBe(true);
      }
    }
  });
});
