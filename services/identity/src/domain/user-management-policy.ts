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

/**
 * A principal may create, change or delete a user, or assign a role, only when its own effective
 * permissions include every permission of the target's current role and of any role it assigns:
 * nobody acts on, or hands out, more than they hold. Changing *another* user's password or email
 * is for JWT callers only; an API key is not a user, so for a key every user is another.
 */
export function mayManageUser(actor: UserManager, change: UserChange): boolean {
  const held = new Set<string>(actor.permissions);
  const holdsRole = (role: Role) => rolePermissions[role].every((p) => held.has(p));
  switch (change.action) {
    case "create":
      return holdsRole(change.role);
    case "delete":
      return holdsRole(change.target.role);
    case "update": {
      if (!holdsRole(change.target.role)) return false;
      if (change.role !== undefined && !holdsRole(change.role)) return false;
      // A JWT caller who passed the role check may set any target's credentials, its own included;
      // a key never may: it is not a user, so every target is "another" user.
      return !change.changesCredentials || actor.authType === "jwt";
    }
  }
}
