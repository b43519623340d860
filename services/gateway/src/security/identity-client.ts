// The gateway's cache-miss path: identity loads the state from its database, fills the shared
// cache and answers it. Misses are batched and bounded (BatchedLookup). Any failure is 503000
// (authentication fails closed, and an unreachable identity is never a verdict about the caller).
import {
  ACCESS_TOKEN_RESOLVE_MAX,
  type AccessTokenClaims,
  type AccessTokenVerdict,
  internalAuthPaths,
  parseAccessTokenVerdicts,
  parseApiKeyAuthState,
  parseUserAuthState,
  type ApiKeyAuthState,
  type UserAuthState,
} from "@crm/auth-cache";
import { INTERNAL_TOKEN_HEADER } from "@crm/contracts";
import { errors } from "@crm/errors";
import { signInternalToken } from "@crm/service-kit";
import { gatewayMetrics } from "@crm/telemetry";
import { type Upstream, UpstreamPool } from "../http/upstream-pool";
import { BatchedLookup } from "./batched-lookup";

const TIMEOUT_MS = 5000;
/** An internal token is valid 60 s; one is reused for 30 s so misses do not each pay a signature. */
const TOKEN_REUSE_MS = 30_000;
/** Keys of one kind waiting for identity at most (beyond: 503000 at once). */
const MAX_WAITING = 10_000;
/** Identity's single-key endpoints: concurrent misses of one key share a call, 16 calls out at most. */
const ONE_AT_A_TIME = { maxBatch: 1, maxInFlight: 16, maxWaiting: MAX_WAITING };

export class IdentityClient {
  private token: { value: string; madeAt: number } | undefined;
  private readonly accessTokens: BatchedLookup<AccessTokenClaims, AccessTokenVerdict>;
  private readonly users: BatchedLookup<string, UserAuthState>;
  private readonly apiKeys: BatchedLookup<string, ApiKeyAuthState>;
  /** Identity's replicas; every call here is a lookup or a repeatable report, so any may go to another. */
  private readonly replicas: UpstreamPool<string>;

  constructor(
    identityUrl: Upstream,
    private readonly internalTokenSecret: string,
  ) {
    this.replicas = new UpstreamPool(identityUrl, (url) => url);
    this.accessTokens = new BatchedLookup((claims) => this.resolveAccessTokens(claims), { maxBatch: ACCESS_TOKEN_RESOLVE_MAX, maxInFlight: 4, maxWaiting: MAX_WAITING });
    this.users = new BatchedLookup(async ([userId]) => new Map([[userId!, await this.fetchUser(userId!)]]), ONE_AT_A_TIME);
    this.apiKeys = new BatchedLookup(async ([digest]) => new Map([[digest!, await this.fetchApiKey(digest!)]]), ONE_AT_A_TIME);
  }

  /** Whether a verified token's session is live, as identity's database says (with the user's state). */
  accessToken(claims: AccessTokenClaims): Promise<AccessTokenVerdict> {
    return counted("access_token", this.accessTokens.get(claims.jti, claims));
  }

  user(userId: string): Promise<UserAuthState> {
    return counted("user", this.users.get(userId, userId));
  }

  apiKey(digest: string): Promise<ApiKeyAuthState> {
    return counted("api_key", this.apiKeys.get(digest, digest));
  }

  /** Batched `lastUsedAt` reports (see api-key-usage.ts). */
  async reportApiKeyUse(uses: ReadonlyArray<{ id: string; at: string }>): Promise<void> {
    await this.call("POST", internalAuthPaths.apiKeyUse, { uses });
  }

  private async resolveAccessTokens(claims: readonly AccessTokenClaims[]): Promise<ReadonlyMap<string, AccessTokenVerdict>> {
    const tokens = claims.map(({ jti, sid, sub, exp }) => ({ jti, sessionId: sid, userId: sub, exp }));
    const verdicts = parseAccessTokenVerdicts(await this.call("POST", internalAuthPaths.accessTokens, { tokens }));
    if (!verdicts) throw errors.unavailable(undefined, { cause: new Error("identity answered an unreadable verdict") });
    return verdicts;
  }

  private async fetchUser(userId: string): Promise<UserAuthState> {
    const state = parseUserAuthState(await this.call("GET", internalAuthPaths.user(userId)));
    if (!state) throw errors.unavailable();
    return state;
  }

  private async fetchApiKey(digest: string): Promise<ApiKeyAuthState> {
    const state = parseApiKeyAuthState(await this.call("POST", internalAuthPaths.apiKey, { digest }));
    if (!state) throw errors.unavailable();
    return state;
  }

  private internalToken(): string {
    const now = Date.now();
    if (!this.token || now - this.token.madeAt > TOKEN_REUSE_MS) {
      this.token = { value: signInternalToken({}, this.internalTokenSecret), madeAt: now };
    }
    return this.token.value;
  }

  private async call(method: "GET" | "POST", path: string, body?: unknown): Promise<string> {
    let response: Response;
    try {
      response = await this.replicas.send(true, (baseUrl) =>
        fetch(new URL(path, baseUrl), {
          method,
          headers: { [INTERNAL_TOKEN_HEADER]: this.internalToken(), ...(body ? { "content-type": "application/json" } : {}) },
          body: body ? JSON.stringify(body) : undefined,
          signal: AbortSignal.timeout(TIMEOUT_MS),
        }),
      );
    } catch (cause) {
      throw errors.unavailable(undefined, { cause });
    }
    const text = await response.text().catch((cause: unknown) => {
      throw errors.unavailable(undefined, { cause });
    });
    if (!response.ok) throw errors.unavailable(undefined, { cause: new Error(`identity answered ${response.status}`) });
    return text;
  }
}

/** Each request that missed the store, by what it missed and whether identity answered. */
function counted<T>(kind: "access_token" | "user" | "api_key", answer: Promise<T>): Promise<T> {
  const misses = gatewayMetrics().authCacheMisses;
  return answer.then(
    (value) => {
      misses.labels(kind, "ok").inc();
      return value;
    },
    (err: unknown) => {
      misses.labels(kind, "unavailable").inc();
      throw err;
    },
  );
}
