// Who may manage whom. The route's own permission (users.create / users.update / users.delete) only
// says a caller may manage users at all; without this rule a key scoped to `users.update` could
// reset the OWNER's password and take the business over. Pure: the caller loads the target.
import { rolePermissions, type Principal, type Role } from "@crm/contracts";

/** What a request would do to a user, as far as authorization is concerned. */
export type UserChange =
  | { action: "create"; role: Role }
  | {
      action: "update";
      target: { id: string; role: Role };
      /** The role being assigned, when the request gives one. */
      role?: Role;
      /** The request changes the target's password or email (a sign-in credential). */
      changesCredentials: boolean;
    }
  | { action: "delete"; target: { id: string; role: Role } };

export type UserManager = Pick<Principal, "authType" | "userId" | "permissions">;

/** Whether the actor is the signed-in user `userId` (an API key never is a user). */
export function isSelf(actor: UserManager, userId: string): boolean {
  return actor.authType === "jwt" && actor.userId !== null && actor.userId === userId;
}

/**
 * A principal may create, change or delete a user, or assign a role, only when its own effective
 * permissions include every permission of the target's current role and of any role it assigns:
 * nobody acts on, or hands out, more than they hold. Setting a password or an email (on create or
 * update) is for signed-in users only (extensions §E10): an API key is not a user. Every signed-in
 * user may change their own name, email and password without `users.update`; their role, and any
 * other user, need it.
 */
export function mayManageUser(actor: UserManager, change: UserChange): boolean {
  const held = new Set<string>(actor.permissions);
  const holdsRole = (role: Role) => rolePermissions[role].every((p) => held.has(p));
  switch (change.action) {
    case "create":
      // A new user always gets an email and a password.
      return actor.authType === "jwt" && holdsRole(change.role);
    case "delete":
      return holdsRole(change.target.role);
    case "update": {
      const managesUsers = held.has("users.update");
      if (!managesUsers && (!isSelf(actor, change.target.id) || change.role !== undefined)) return false;
      if (!holdsRole(change.target.role)) return false;
      if (change.role !== undefined && !holdsRole(change.role)) return false;
      return !change.changesCredentials || actor.authType === "jwt";
    }
  }
}
