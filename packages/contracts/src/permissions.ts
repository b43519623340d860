/** Permissions are `resource.action`; roles map to fixed sets of them (decisions §4). */
import { recordEntities } from "./events";
import { recordContracts, type RecordResource } from "./records";

/** The record entities' resources, in entity order; each is declared with its entity's contract (records.ts). */
export const recordResources: readonly RecordResource[] = recordEntities.map((entity) => recordContracts[entity].resource);
export const resources = [...recordResources, "webhooks", "apiKeys", "users"] as const;
export const actions = ["read", "create", "update", "delete"] as const;

export type Resource = (typeof resources)[number];
export type Action = (typeof actions)[number];
export type Permission = `${Resource}.${Action}`;

export const allPermissions: readonly Permission[] = resources.flatMap((r) => actions.map((a) => `${r}.${a}` as Permission));

export const roles = ["OWNER", "ADMIN", "MEMBER", "VIEWER"] as const;
export type Role = (typeof roles)[number];

export const rolePermissions: Readonly<Record<Role, readonly Permission[]>> = {
  OWNER: allPermissions,
  ADMIN: allPermissions,
  MEMBER: [...recordResources.flatMap((r) => actions.map((a) => `${r}.${a}` as Permission)), "webhooks.read"],
  VIEWER: recordResources.map((r) => `${r}.read` as Permission),
};

const known = new Set<string>(allPermissions);
export function isPermission(value: string): value is Permission {
  return known.has(value);
}

export function permission(resource: Resource, action: Action): Permission {
  return `${resource}.${action}`;
}
