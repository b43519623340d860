// Resolves a credential to a Principal with the caller's permissions as they are now. JWTs are
// verified locally with a pre-built key; the allow-list and the user's role come from the shared
// store in one round trip; API keys are looked up by digest. Identity is asked only on a miss: the
// store caches identity's database, so a missing entry is a question for identity, never a verdict.
import {
  type AccessTokenClaims,
  AccessTokenCodec,
  AllowList,
  API_KEY_PATTERN,
  type ApiKeyAuthState,
  type ApiKeyRateLimit,
  AuthCache,
  digestApiKey,
  effectivePermissions,
  type UserAuthState,
} from "@crm/auth-cache";
import { rolePermissions, type Principal } from "@crm/contracts";
import { errors } from "@crm/errors";
import type { KvStore } from "@crm/kv-store";
import type { Credential } from "./credentials";
import type { IdentityClient } from "./identity-client";

/** What an API key restricts beyond its permissions (extensions §E3.2), decided without I/O. */
export interface KeyControls {
  /** null: any address. */
  allowList: AllowList | null;
  /** null: the global limit. */
  rateLimit: ApiKeyRateLimit | null;
}

/** Verified tokens remembered at most (a few MB); the map is emptied when full. */
const VERIFIED_MAX = 10_000;

export class Authenticator {
  private readonly codec: AccessTokenCodec;
  private readonly cache: AuthCache;
  /**
   * Claims of tokens whose signature checked out, by token: a caller sends the same token for its
   * whole life, so one claims object stands for it and keys its principal (below; docs/performance.md
   * D9). Only correctly signed tokens get in, so the map cannot be filled with garbage; expiry is
   * checked on every use. Whether the token is still allowed (sign-out, deletion) is read from the
   * store on every request.
   */
  private readonly verified = new Map<string, AccessTokenClaims>();
  /**
   * The principal last built for a token and the user state it was built from: the store hands
   * back the same (frozen) state object while the stored entry is unchanged, so while it is the same
   * object the principal is the same too, built once per caller state rather than per request (D9).
   */
  private readonly principals = new WeakMap<AccessTokenClaims, { user: UserAuthState; principal: Principal }>();
  /** Likewise for API keys: by the key's state, then its creator's state. */
  private readonly keyPrincipals = new WeakMap<ApiKeyAuthState, { creator: UserAuthState; principal: Principal }>();
  /** A key principal's restrictions, built once per key state (the allow-list parsed once). */
  private readonly controls = new WeakMap<Principal, KeyControls>();

  constructor(
    jwtSecret: string,
    kv: KvStore,
    private readonly identity: IdentityClient,
    private readonly now: () => number = Date.now,
  ) {
    this.codec = new AccessTokenCodec(jwtSecret);
    this.cache = new AuthCache(kv);
  }

  /** The principal, or an AppError with the exact 401xxx code. Store failures surface as 503000. */
  async authenticate(credential: Credential): Promise<Principal> {
    switch (credential.kind) {
      case "none":
        throw errors.authenticationRequired();
      case "malformed":
        throw errors.invalidAccessToken();
      case "jwt":
        return this.fromJwt(credential.token);
      case "apiKey":
        return this.fromApiKey(credential.key);
    }
  }

  private async fromJwt(token: string): Promise<Principal> {
    const claims = this.verify(token);
    if (!claims) throw errors.invalidAccessToken();
    try {
      return await this.principalOf(claims);
    } catch (err) {
      // No more guesses for a token once refused (a sign-out, a deleted user, the store down).
      this.principals.delete(claims);
      throw err;
    }
  }

  private async principalOf(claims: AccessTokenClaims): Promise<Principal> {
    const cached = await guardStore(() => this.cache.readAccessTokenAndUser(claims.jti, claims.sub));
    let user = cached.user;
    if (cached.entry !== claims.sid) {
      // A tombstone (sign-out, revocation) is a verdict; no entry at all only means the store does
      // not know (restarted empty, evicted, failed over): identity's database decides, and fills it.
      if (cached.entry !== null) throw errors.accessTokenNotWhitelisted();
      const verdict = await this.identity.accessToken(claims);
      if (!verdict.live) throw errors.accessTokenNotWhitelisted();
      user ??= verdict.user;
    }
    user ??= await this.identity.user(claims.sub);
    if (user.deleted) throw errors.accessTokenNotWhitelisted();
    if (!user.businessId) throw errors.businessRequired();
    const known = this.principals.get(claims);
    if (known?.user === user) return known.principal;
    const principal: Principal = Object.freeze({
      businessId: user.businessId,
      authType: "jwt",
      userId: user.userId,
      apiKeyId: null,
      sessionId: claims.sid,
      jti: claims.jti,
      permissions: [...rolePermissions[user.role]],
      // The audit log's actor label (extensions §E7), when identity's cached state has one.
      ...(user.label ? { label: user.label } : {}),
    });
    this.principals.set(claims, { user, principal });
    return principal;
  }

  private verify(token: string): AccessTokenClaims | undefined {
    const now = this.now();
    const known = this.verified.get(token);
    if (known) return known.exp * 1000 > now ? known : undefined;
    const claims = this.codec.verify(token, now);
    if (claims) {
      if (this.verified.size >= VERIFIED_MAX) this.verified.clear();
      this.verified.set(token, claims);
    }
    return claims;
  }

  private async fromApiKey(key: string): Promise<Principal> {
    if (!API_KEY_PATTERN.test(key)) throw errors.invalidApiKey();
    const digest = digestApiKey(key);
    const state = (await guardStore(() => this.cache.readApiKey(digest))) ?? (await this.identity.apiKey(digest));
    if (state.unknown) throw errors.invalidApiKey();
    if (state.revoked) throw errors.apiKeyRevoked();
    if (state.expiresAt !== null && Date.parse(state.expiresAt) <= this.now()) throw errors.apiKeyExpired();
    // A key acts for its creator; a key whose creator is gone cannot act at all.
    if (!state.createdByUserId) throw errors.apiKeyRevoked();
    const creator = await this.user(state.createdByUserId);
    if (creator.deleted) throw errors.apiKeyRevoked();
    if (!creator.businessId) throw errors.businessRequired();
    const known = this.keyPrincipals.get(state);
    if (known?.creator === creator) return known.principal;
    const principal: Principal = Object.freeze({
      businessId: state.businessId,
      authType: "apiKey",
      userId: null,
      apiKeyId: state.id,
      sessionId: null,
      jti: null,
      permissions: effectivePermissions(creator.role, state.scopes),
      ...(state.label ? { label: state.label } : {}),
    });
    this.keyPrincipals.set(state, { creator, principal });
    this.controls.set(principal, { allowList: state.allowedIps ? new AllowList(state.allowedIps) : null, rateLimit: state.rateLimit });
    return principal;
  }

  /** The restrictions of the key an API-key principal from `authenticate` stands for; undefined for a JWT's. */
  keyControls(principal: Principal): KeyControls | undefined {
    return this.controls.get(principal);
  }

  private async user(userId: string): Promise<UserAuthState> {
    return (await guardStore(() => this.cache.readUser(userId))) ?? (await this.identity.user(userId));
  }
}

/** The store being unreachable is not the caller's fault, and must never let a request through. */
async function guardStore<T>(read: () => Promise<T>): Promise<T> {
  try {
    return await read();
  } catch (cause) {
    throw errors.unavailable(undefined, { cause });
  }
}
