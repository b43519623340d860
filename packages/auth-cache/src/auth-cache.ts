// The one definition of the auth keys in the shared key-value store. Identity writes (allow-lists,
// write-through of user and key state), the gateway reads and, on a miss, asks identity to fill.
// The store is a cache of identity's database, never the record: an entry that is missing (a Redis
// restarted empty, a failover, an eviction) costs a lookup in the database, never a session. What
// must survive a race is a revocation, so revoking writes tombstones, and a fill never overwrites.
import type { KvStore } from "@crm/kv-store";
import { parseApiKeyAuthState, parseUserAuthState, type ApiKeyAuthState, type UserAuthState } from "./auth-state";

/** How long resolved user and key state stays cached; changes are written through, so this only bounds memory. */
export const AUTH_STATE_TTL_MS = 10 * 60_000;
/** Unknown keys are remembered briefly so a flood of bad keys does not reach the database. */
export const UNKNOWN_API_KEY_TTL_MS = 30_000;

/** The value of a refused access token's entry (a tombstone), and of an ended session's. */
export const REVOKED = "revoked";

export const authKeys = {
  /** Access-token allow-list entry; value = session id, or REVOKED; TTL = token lifetime. */
  accessToken: (jti: string) => `auth:at:${jti}`,
  /** The access-token ids of a session on the allow-list, so revoking the session revokes them all. */
  sessionAccessTokens: (sessionId: string) => `auth:sat:${sessionId}`,
  /** REVOKED once the session has ended: a fill racing the revocation reads it and allows nothing. */
  revokedSession: (sessionId: string) => `auth:srv:${sessionId}`,
  user: (userId: string) => `auth:user:${userId}`,
  apiKey: (digest: string) => `auth:key:${digest}`,
};

/** Identity's internal endpoints the gateway calls on a cache miss (internal token, no principal). */
export const internalAuthPaths = {
  user: (userId: string) => `/internal/auth/users/${encodeURIComponent(userId)}`,
  apiKey: "/internal/auth/api-keys/resolve",
  /** Whether access tokens' sessions are live (body `{tokens: AccessTokenQuery[]}`; see SessionVerdict). */
  accessTokens: "/internal/auth/access-tokens/resolve",
  /** Batched reports of API-key use, for `lastUsedAt` (body `{uses: [{id, at}]}`, 204). */
  apiKeyUse: "/internal/auth/api-keys/used",
};

/** Most access tokens one resolve request may carry; a gateway with more sends several. */
export const ACCESS_TOKEN_RESOLVE_MAX = 100;

/** Most uses one report may carry; a gateway with more sends several. */
export const API_KEY_USE_REPORT_MAX = 1000;

/** Parsed entries remembered at most, by their stored text; the map is emptied when full. */
const PARSED_MAX = 10_000;

export class AuthCache {
  /**
   * The same stored text parses to the same (frozen) object: a gateway reads a caller's entry on
   * every request and gets the same text back until identity writes it again, so the parse (and
   * whatever callers derive from the object, keyed by its identity) is done once per change.
   */
  private readonly parsedUsers = new Map<string, UserAuthState>();
  private readonly parsedApiKeys = new Map<string, ApiKeyAuthState>();

  constructor(private readonly kv: KvStore) {}

  // Access-token allow-list ----------------------------------------------------------------

  /** At issue: the token is allowed for its lifetime (a new jti, so nothing can be there yet). */
  async allowAccessToken(jti: string, sessionId: string, ttlMs: number): Promise<void> {
    await this.kv.set(authKeys.accessToken(jti), sessionId, ttlMs);
    await this.kv.addToSet(authKeys.sessionAccessTokens(sessionId), jti, ttlMs);
  }

  /** The session id of an allowed token; null when it is refused (a tombstone) or not cached. */
  async allowedAccessToken(jti: string): Promise<string | null> {
    const entry = await this.kv.get(authKeys.accessToken(jti));
    return entry === REVOKED ? null : entry;
  }

  /**
   * Refuses one access token for `ttlMs` (at least its remaining life): a tombstone, so no fill can
   * put it back (a token issued to a session found revoked since, or one identity answered "not live").
   */
  async withdrawAccessToken(jti: string, sessionId: string, ttlMs: number): Promise<void> {
    await this.kv.set(authKeys.accessToken(jti), REVOKED, ttlMs);
    await this.kv.removeFromSet(authKeys.sessionAccessTokens(sessionId), jti);
  }

  /**
   * Ends a session in the cache, after the database: the session's tombstone first, then one on
   * every access token the cache lists for it. `ttlMs` must cover the longest-lived token of the
   * session (the access-token lifetime). Not atomic, and need not be: a fill adds its token to the
   * session's list before it reads the session's tombstone, so it either reads the tombstone and
   * allows nothing, or was listed before this read the list and gets its tombstone here (see
   * fillAccessToken); a token issued meanwhile is withdrawn by its issuer (SessionService.refresh).
   */
  async revokeSession(sessionId: string, ttlMs: number): Promise<void> {
    await this.kv.set(authKeys.revokedSession(sessionId), REVOKED, ttlMs);
    const setKey = authKeys.sessionAccessTokens(sessionId);
    const jtis = await this.kv.members(setKey);
    await Promise.all(jtis.map((jti) => this.kv.set(authKeys.accessToken(jti), REVOKED, ttlMs)));
    await this.kv.del(setKey);
  }

  /**
   * Identity's fill after a gateway's miss, for a token whose session the database holds as live:
   * allows it unless the session was revoked meanwhile. Never overwrites: a tombstone stays. True
   * when the token is allowed now.
   */
  async fillAccessToken(jti: string, sessionId: string, ttlMs: number): Promise<boolean> {
    // Listed first: a revocation that reads the list after this finds the token and tombstones it.
    // Never unlisted here, even when refused: the token may be listed by its issuer as well.
    await this.kv.addToSet(authKeys.sessionAccessTokens(sessionId), jti, ttlMs);
    if ((await this.kv.get(authKeys.revokedSession(sessionId))) !== null) return false;
    if (await this.kv.setIfAbsent(authKeys.accessToken(jti), sessionId, ttlMs)) return true;
    return (await this.kv.get(authKeys.accessToken(jti))) === sessionId;
  }

  /**
   * One round trip for a JWT request: the allow-list entry and the user's state. `entry` is the
   * session id of an allowed token, REVOKED for a refused one, null when the cache does not know.
   */
  async readAccessTokenAndUser(jti: string, userId: string): Promise<{ entry: string | null; user: UserAuthState | undefined }> {
    const [entry, user] = await this.kv.getMany([authKeys.accessToken(jti), authKeys.user(userId)]);
    return { entry: entry ?? null, user: this.parseUser(user ?? null) };
  }

  // User state ------------------------------------------------------------------------------

  async readUser(userId: string): Promise<UserAuthState | undefined> {
    return this.parseUser(await this.kv.get(authKeys.user(userId)));
  }

  private parseUser(text: string | null): UserAuthState | undefined {
    return text === null ? undefined : remembered(this.parsedUsers, text, parseUserAuthState);
  }

  /** Write-through after a change: always overwrites. */
  async writeUser(state: UserAuthState): Promise<void> {
    await this.kv.set(authKeys.user(state.userId), JSON.stringify(state), AUTH_STATE_TTL_MS);
  }

  /** Fill after a miss: never overwrites, so a fill that read the database before a change cannot undo it. */
  async fillUser(state: UserAuthState): Promise<void> {
    await this.kv.setIfAbsent(authKeys.user(state.userId), JSON.stringify(state), AUTH_STATE_TTL_MS);
  }

  // API-key state ---------------------------------------------------------------------------

  async readApiKey(digest: string): Promise<ApiKeyAuthState | undefined> {
    const text = await this.kv.get(authKeys.apiKey(digest));
    return text === null ? undefined : remembered(this.parsedApiKeys, text, parseApiKeyAuthState);
  }

  async writeApiKey(digest: string, state: ApiKeyAuthState): Promise<void> {
    await this.kv.set(authKeys.apiKey(digest), JSON.stringify(state), ttlOf(state));
  }

  async fillApiKey(digest: string, state: ApiKeyAuthState): Promise<void> {
    await this.kv.setIfAbsent(authKeys.apiKey(digest), JSON.stringify(state), ttlOf(state));
  }
}

function remembered<T extends object>(parsed: Map<string, T>, text: string, parse: (text: string) => T | undefined): T | undefined {
  const known = parsed.get(text);
  if (known) return known;
  const value = parse(text);
  if (value === undefined) return undefined;
  if (parsed.size >= PARSED_MAX) parsed.clear();
  parsed.set(text, Object.freeze(value));
  return value;
}

function ttlOf(state: ApiKeyAuthState): number {
  return state.unknown ? UNKNOWN_API_KEY_TTL_MS : AUTH_STATE_TTL_MS;
}
