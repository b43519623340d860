// Database rows -> the API's shapes (@crm/contracts). The only place secrets are left behind.
import type { ApiKeyView, BusinessView, UserView } from "@crm/contracts";
import { accessControlsOf } from "../application/auth-state.service";
import type { ApiKey, Business, User } from "../persistence/prisma";

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
