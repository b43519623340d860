// Database rows -> the API's shapes (@crm/contracts). The only place secrets are left behind. The
// routers answer with them and the audit entries show them (identity-audit.ts), so they live here,
// below both, and the audit never depends on HTTP code.
import type { ApiKeyView, BusinessView, UserView } from "@crm/contracts";
import type { ApiKey, Business, User } from "../persistence/prisma";

/** A key's allow-list and own rate limit as the API and the gateways see them (null: none). */
export function accessControlsOf(key: ApiKey): { allowedIps: string[] | null; rateLimit: { max: number; windowSeconds: number } | null } {
  return {
    allowedIps: key.allowedIps && key.allowedIps.length > 0 ? key.allowedIps : null,
    rateLimit: key.rateLimitMax !== null && key.rateLimitWindowSeconds !== null ? { max: key.rateLimitMax, windowSeconds: key.rateLimitWindowSeconds } : null,
  };
}

export function userView(user: User): UserView {
  return {
    id: user.id,
    businessId: user.businessId,
    email: user.email,
    firstName: user.firstName,
    lastName: user.lastName,
    role: user.role,
    createdAt: user.createdAt.toISOString(),
    updatedAt: user.updatedAt.toISOString(),
  };
}

export function businessView(business: Business): BusinessView {
  return { id: business.id, name: business.name, createdAt: business.createdAt.toISOString() };
}

export function apiKeyView(key: ApiKey): ApiKeyView {
  return {
    id: key.id,
    businessId: key.businessId,
    name: key.name,
    keyPrefix: key.keyPrefix,
    scopes: key.scopes,
    expiresAt: key.expiresAt?.toISOString() ?? null,
    isActive: key.revokedAt === null,
    revokedAt: key.revokedAt?.toISOString() ?? null,
    createdByUserId: key.createdByUserId,
    createdAt: key.createdAt.toISOString(),
    lastUsedAt: key.lastUsedAt?.toISOString() ?? null,
    lastUsedIp: key.lastUsedIp,
    ...accessControlsOf(key),
  };
}
