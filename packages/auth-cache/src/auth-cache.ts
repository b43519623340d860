// The one definition of the auth keys in the shared key-value store. Identity writes (allow-lists,
// write-through of user and key state), the gateway reads and, on a miss, asks identity to fill.
import type { KvStore } from "@crm/kv-store";
import { parseApiKeyAuthState, parseUserAuthState, type ApiKeyAuthState, type UserAuthState } from "./auth-state";

/** How long resolved user and key state stays cached; changes are written through, so this only bounds memory. */
export const AUTH_STATE_TTL_MS = 10 * 60_000;
/** Unknown keys are remembered briefly so a flood of bad keys does not reach the database. */
export const UNKNOWN_API_KEY_TTL_MS = 30_000;

export const authKeys = {
  /** Access-token allow-list entry; value = session id; TTL = token lifetime. */
  accessToken: (jti: string) => `auth:at:${jti}`,
  /** The live access-token ids of a session, so revoking the session revokes them all. */
  sessionAccessTokens: (sessionId: string) => `auth:sat:${sessionId}`,
  user: (userId: string) => `auth:user:${userId}`,
  apiKey: (digest: string) => `auth:key:${digest}`,
};

/** Identity's internal endpoints the gateway calls on a cache miss (internal token, no principal). */
export const internalAuthPaths = {
  user: (userId: string) => `/internal/auth/users/${encodeURIComponent(userId)}`,
  apiKey: "/internal/auth/api-keys/resolve",
  /** Batched reports of API-key use, for `lastUsedAt` (body `{uses: [{id, at}]}`, 204). */
  apiKeyUse: "/internal/auth/api-keys/used",
};

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

  async allowAccessToken(jti: string, sessionId: string, ttlMs: number): Promise<void> {
    await this.kv.set(authKeys.accessToken(jti), sessionId, ttlMs);
    await this.kv.addToSet(authKeys.sessionAccessTokens(sessionId), jti, ttlMs);
  }

  /** The session id of an allowed token, or null when it is not (or no longer) on the list. */
  async allowedAccessToken(jti: string): Promise<string | null> {
    return this.kv.get(authKeys.accessToken(jti));
  }

  /** Takes one access token off the allow-list (issued, then found to belong to a revoked session). */
  async withdrawAccessToken(jti: string, sessionId: string): Promise<void> {
    await this.kv.del(authKeys.accessToken(jti));
    await this.kv.removeFromSet(authKeys.sessionAccessTokens(sessionId), jti);
  }

  /**
   * Removes every live access token of a session from the allow-list. Not atomic: a token added
   * while this runs is the adder's to withdraw (identity re-checks the session after publishing).
   */
  async revokeSessionAccessTokens(sessionId: string): Promise<void> {
    const setKey = authKeys.sessionAccessTokens(sessionId);
    const jtis = await this.kv.members(setKey);
    await this.kv.del(...jtis.map(authKeys.accessToken), setKey);
  }

  /** One round trip for a JWT request: the allow-list entry and the user's state. */
  async readAccessTokenAndUser(jti: string, userId: string): Promise<{ sessionId: string | null; user: UserAuthState | undefined }> {
    const [sessionId, user] = await this.kv.getMany([authKeys.accessToken(jti), authKeys.user(userId)]);
    return { sessionId: sessionId ?? null, user: this.parseUser(user ?? null) };
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
