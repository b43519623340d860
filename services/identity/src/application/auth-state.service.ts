// Keeps the shared auth cache (@crm/auth-cache) in step with the database: written through on every
// change, filled on a gateway's miss.
import { isPermission, type Permission } from "@crm/contracts";
import type { ApiKeyAuthState, AuthCache, UserAuthState } from "@crm/auth-cache";
import type { ApiKey, PrismaClient, User } from "../persistence/prisma";
import { published } from "./published";

export function userState(user: User): UserAuthState {
  return { v: 1, userId: user.id, deleted: false, businessId: user.businessId, role: user.role };
}

export function apiKeyState(key: ApiKey): ApiKeyAuthState {
  return {
    v: 1,
    unknown: false,
    id: key.id,
    businessId: key.businessId,
    createdByUserId: key.createdByUserId,
    scopes: key.scopes.filter((s): s is Permission => isPermission(s)),
    expiresAt: key.expiresAt?.toISOString() ?? null,
    revoked: key.revokedAt !== null,
  };
}

export class AuthStateService {
  constructor(
    private readonly prisma: PrismaClient,
    private readonly cache: AuthCache,
  ) {}

  publishUser(user: User): Promise<void> {
    return published(this.cache.writeUser(userState(user)));
  }

  publishUserDeleted(userId: string): Promise<void> {
    return published(this.cache.writeUser({ v: 1, userId, deleted: true }));
  }

  publishApiKey(key: ApiKey): Promise<void> {
    return published(this.cache.writeApiKey(key.keyDigest, apiKeyState(key)));
  }

  /** A gateway's miss: the user's current state, also cached for the next request. */
  async resolveUser(userId: string): Promise<UserAuthState> {
    const user = await this.prisma.user.findUnique({ where: { id: userId } });
    const state: UserAuthState = user ? userState(user) : { v: 1, userId, deleted: true };
    await this.cache.fillUser(state);
    return state;
  }

  async resolveApiKey(digest: string): Promise<ApiKeyAuthState> {
    const key = await this.prisma.apiKey.findUnique({ where: { keyDigest: digest } });
    const state: ApiKeyAuthState = key ? apiKeyState(key) : { v: 1, unknown: true };
    await this.cache.fillApiKey(digest, state);
    return state;
  }
}
