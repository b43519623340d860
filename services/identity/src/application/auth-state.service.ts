// Keeps the shared auth cache (@crm/auth-cache) in step with the database: written through on every
// change, filled on a gateway's miss. The database decides; the cache remembers its answers.
import { isPermission, isUuid, type Permission } from "@crm/contracts";
import type { AccessTokenQuery, AccessTokenVerdict, ApiKeyAuthState, AuthCache, UserAuthState } from "@crm/auth-cache";
import type { ApiKey, PrismaClient, User } from "../persistence/prisma";
import { accessControlsOf } from "./identity-views";
import { published } from "./published";

export function userState(user: User): UserAuthState {
  return { v: 1, userId: user.id, deleted: false, businessId: user.businessId, role: user.role, label: user.email };
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
    ...accessControlsOf(key),
    label: key.name,
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

  /**
   * A gateway's miss on access tokens: whether each token's session is live (it exists, belongs to the
   * token's user and is not revoked), with the user's state, each answer also cached for the token's
   * remaining life. A session revoked while this runs stays revoked: a refused token gets a tombstone,
   * an allowed one is filled only if no revocation has marked its session (fillAccessToken), and the
   * sessions are read again after the fill, so a revocation whose own cleanup ran before the fill (a
   * store that lost its entries in between) is seen, and the token withdrawn, before anyone is answered.
   */
  async resolveAccessTokens(queries: readonly AccessTokenQuery[], nowMs = Date.now()): Promise<AccessTokenVerdict[]> {
    const sessions = await this.liveSessions(queries.map((q) => q.sessionId));
    const verdicts = await Promise.all(
      queries.map(async ({ jti, sessionId, userId, exp }): Promise<AccessTokenVerdict> => {
        const ttlMs = exp * 1000 - nowMs;
        // Expired since the gateway verified it: refused there on its next check anyway; nothing to cache.
        if (ttlMs <= 0) return { jti, live: false };
        const session = sessions.get(sessionId);
        if (!session || session.userId !== userId) {
          await this.cache.withdrawAccessToken(jti, sessionId, ttlMs);
          return { jti, live: false };
        }
        if (!(await this.cache.fillAccessToken(jti, sessionId, ttlMs))) return { jti, live: false };
        const user = userState(session.user);
        await this.cache.fillUser(user);
        return { jti, live: true, user };
      }),
    );
    const filled = verdicts.flatMap((v, i) => (v.live ? [queries[i]!] : []));
    if (filled.length === 0) return verdicts;
    const stillLive = await this.liveSessions(filled.map((q) => q.sessionId));
    return Promise.all(
      verdicts.map(async (verdict, i) => {
        const { jti, sessionId, exp } = queries[i]!;
        if (!verdict.live || stillLive.has(sessionId)) return verdict;
        await this.cache.withdrawAccessToken(jti, sessionId, Math.max(1, exp * 1000 - nowMs));
        return { jti, live: false };
      }),
    );
  }

  /** The sessions among `ids` that are not revoked, with their users. */
  private async liveSessions(ids: readonly string[]): Promise<Map<string, { userId: string; user: User }>> {
    const wanted = [...new Set(ids.filter(isUuid))];
    if (wanted.length === 0) return new Map();
    const rows = await this.prisma.session.findMany({ where: { id: { in: wanted }, revokedAt: null }, select: { id: true, userId: true, user: true } });
    return new Map(rows.map((row) => [row.id, row]));
  }

  async resolveApiKey(digest: string): Promise<ApiKeyAuthState> {
    const key = await this.prisma.apiKey.findUnique({ where: { keyDigest: digest } });
    const state: ApiKeyAuthState = key ? apiKeyState(key) : { v: 1, unknown: true };
    await this.cache.fillApiKey(digest, state);
    return state;
  }
}
