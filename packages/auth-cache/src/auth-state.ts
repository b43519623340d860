// What identity writes and the gateway reads to resolve a caller's current permissions. Permissions
// are never baked into tokens: a demotion, deletion or revocation is one write here and is seen by
// every gateway instance sharing the store on its next request.
import { isPermission, rolePermissions, roles, type Permission, type Role } from "@crm/contracts";

export const AUTH_STATE_VERSION = 1;

/** A user as the gateway needs it. `deleted` is a tombstone, so a racing cache fill cannot resurrect the user. */
export type UserAuthState =
  /** `label`: the user's email, the audit log's actor label (extensions §E7); absent from an identity before it. */
  { v: 1; userId: string; deleted: false; businessId: string | null; role: Role; label?: string | null } | { v: 1; userId: string; deleted: true };

/** An API key as the gateway needs it, by digest. `unknown` is a short-lived negative entry. */
export type ApiKeyAuthState =
  | {
      v: 1;
      unknown: false;
      id: string;
      businessId: string;
      createdByUserId: string | null;
      scopes: Permission[];
      /** ISO 8601, or null for no expiry. */
      expiresAt: string | null;
      revoked: boolean;
      /** Normalised CIDR blocks the key may be used from; null: any address (extensions §E3.2). */
      allowedIps: string[] | null;
      /** The key's own rate limit; null: the global one. */
      rateLimit: ApiKeyRateLimit | null;
      /** The key's name, the audit log's actor label (extensions §E7); absent from an identity before it. */
      label?: string | null;
    }
  | { v: 1; unknown: true };

export interface ApiKeyRateLimit {
  max: number;
  windowSeconds: number;
}

/** A gateway's question on a miss: is this verified token's session live? (claims of the token) */
export interface AccessTokenQuery {
  jti: string;
  sessionId: string;
  userId: string;
  /** The token's `exp`, in seconds since the epoch: what identity caches lives no longer. */
  exp: number;
}

/** Identity's answer, from its database: live (with the user's state), or not (401011 at the gateway). */
export type AccessTokenVerdict = { jti: string; live: true; user: UserAuthState } | { jti: string; live: false };

const roleSet = new Set<string>(roles);

export function parseUserAuthState(text: string | null): UserAuthState | undefined {
  return userAuthStateOf(parse(text));
}

function userAuthStateOf(value: Record<string, unknown> | undefined): UserAuthState | undefined {
  if (!value || value.v !== AUTH_STATE_VERSION || typeof value.userId !== "string") return undefined;
  if (value.deleted === true) return { v: 1, userId: value.userId, deleted: true };
  if (value.deleted !== false || typeof value.role !== "string" || !roleSet.has(value.role)) return undefined;
  if (value.businessId !== null && typeof value.businessId !== "string") return undefined;
  const label = typeof value.label === "string" ? { label: value.label } : {};
  return { v: 1, userId: value.userId, deleted: false, businessId: value.businessId, role: value.role as Role, ...label };
}

export function parseApiKeyAuthState(text: string | null): ApiKeyAuthState | undefined {
  const value = parse(text);
  if (!value || value.v !== AUTH_STATE_VERSION) return undefined;
  if (value.unknown === true) return { v: 1, unknown: true };
  const { id, businessId, createdByUserId, scopes, expiresAt, revoked } = value;
  // Written by an identity from before §E3.2 when absent: any address, the global limit.
  const allowedIps = value.allowedIps ?? null;
  const rateLimit = value.rateLimit ?? null;
  if (value.unknown !== false || typeof id !== "string" || typeof businessId !== "string") return undefined;
  if (createdByUserId !== null && typeof createdByUserId !== "string") return undefined;
  if (!Array.isArray(scopes) || !scopes.every((s) => typeof s === "string" && isPermission(s))) return undefined;
  if (expiresAt !== null && typeof expiresAt !== "string") return undefined;
  if (typeof revoked !== "boolean") return undefined;
  if (allowedIps !== null && !(Array.isArray(allowedIps) && allowedIps.every((ip) => typeof ip === "string"))) return undefined;
  if (rateLimit !== null && !isRateLimit(rateLimit)) return undefined;
  const label = typeof value.label === "string" ? { label: value.label } : {};
  return { v: 1, unknown: false, id, businessId, createdByUserId, scopes: scopes as Permission[], expiresAt, revoked, allowedIps, rateLimit, ...label };
}

/** Identity's answer to a resolve request, by jti; undefined when it is not well formed. */
export function parseAccessTokenVerdicts(text: string | null): Map<string, AccessTokenVerdict> | undefined {
  const value = parse(text);
  if (!value || !Array.isArray(value.verdicts)) return undefined;
  const verdicts = new Map<string, AccessTokenVerdict>();
  for (const item of value.verdicts as unknown[]) {
    if (!isRecord(item)) return undefined;
    const { jti, live, user } = item;
    if (typeof jti !== "string" || typeof live !== "boolean") return undefined;
    if (!live) {
      verdicts.set(jti, { jti, live: false });
      continue;
    }
    const state = userAuthStateOf(isRecord(user) ? user : undefined);
    if (!state) return undefined;
    verdicts.set(jti, { jti, live: true, user: state });
  }
  return verdicts;
}

function parse(text: string | null): Record<string, unknown> | undefined {
  if (text === null) return undefined;
  try {
    const value: unknown = JSON.parse(text);
    return isRecord(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

function isRateLimit(value: unknown): value is ApiKeyRateLimit {
  return isRecord(value) && Number.isInteger(value.max) && Number.isInteger(value.windowSeconds) && (value.max as number) > 0 && (value.windowSeconds as number) > 0;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * A key acts with its creator's permissions as they are now: all of them when `scopes` is empty,
 * else only the scopes the creator still holds (decisions §5).
 */
export function effectivePermissions(creatorRole: Role, scopes: readonly Permission[]): Permission[] {
  const held = rolePermissions[creatorRole];
  if (scopes.length === 0) return [...held];
  const allowed = new Set<Permission>(held);
  return scopes.filter((s) => allowed.has(s));
}
