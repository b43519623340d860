// The gateway's security stages: `edge` (CORS, preflights, `Origin: null`) runs before routing;
// `guard` (authentication, rate limit, permission) runs after the route is in `res.locals.route`.
import type { Request, RequestHandler } from "express";
import { mayCallRoute, type Permission, type Principal } from "@crm/contracts";
import { API_KEY_PATTERN, canonicalAddress, digestApiKey } from "@crm/auth-cache";
import { type AppError, errors, isAppError, ErrorCodes } from "@crm/errors";
import { type KvStore, RedisKvStore } from "@crm/kv-store";
import type { Logger } from "@crm/logger";
import { gatewayMetrics } from "@crm/telemetry";
import { Authenticator } from "./authenticator";
import { corsEdge } from "./cors";
import { readCredential, type Credential } from "./credentials";
import { IdentityClient } from "./identity-client";
import { ApiKeyUsage } from "./api-key-usage";
import { addressKey, createRateLimiter } from "./rate-limiter";
import { pathSegment } from "../http/route-table";
import { RecentSet } from "@crm/service-kit";
import type { Upstream } from "../http/upstream-pool";

export interface SecurityConfig {
  CORS_ALLOWED_ORIGINS: readonly string[];
  RATE_LIMIT_MAX: number;
  RATE_LIMIT_WINDOW_MS: number;
  /** The gateway's own rate-limit middleware (D6) instead of express-rate-limit's; on when omitted. */
  RATE_LIMIT_OWN_MIDDLEWARE?: boolean;
  /** The resolved signing key (loadOrCreateSecret), the same one identity signs with. */
  JWT_SECRET: string;
  /** How often API-key use is reported to identity for `lastUsedAt` (default 15 s). */
  API_KEY_USAGE_FLUSH_MS?: number;
}

export interface SecurityDeps {
  config: SecurityConfig;
  /** The shared store identity writes (allow-lists, user and key state). */
  kv: KvStore;
  /**
   * Rate-limit counters live in this Redis when set, in memory otherwise. When `kv` is a Redis store
   * (the gateway opens both on REDIS_URL), the limiter counts on `kv`'s connection.
   */
  redisUrl?: string;
  /** Base URL of identity (or its replicas'), for cache misses (`/internal/auth/...`). */
  identityUrl: Upstream;
  internalTokenSecret: string;
  logger: Logger;
  /** Epoch ms for API keys' and tokens' expiry: Date.now unless a test moves time itself. */
  clock?: () => number;
}

/** The edge's security stages (CORS, authentication, rate limit, permission). */
export interface Security {
  /** Before routing: CORS, preflights, `Origin: null`. */
  edge: RequestHandler[];
  /** After routing (`res.locals.route`): authentication -> `res.locals.principal`, rate limit, permission. */
  guard: RequestHandler[];
  close(): Promise<void>;
}

/** Metric label of each credential kind. */
const CREDENTIAL_KIND_LABELS: Record<Credential["kind"], string> = { apiKey: "api_key", jwt: "jwt", malformed: "malformed", none: "none" };

interface RouteLike {
  public: boolean;
  permission?: Permission;
  jwtOnly?: boolean;
  openToSelf?: boolean;
  idSegment?: number;
}

const userKey = (userId: string) => `user:${userId}`;

/** The client's address: the socket's peer, or what TRUSTED_PROXIES in front of it say (Express's req.ip). */
const clientAddress = (req: Request): string => req.ip ?? req.socket.remoteAddress ?? "";

/** The caller's rate-limit bucket: its API key, else its user, else its address. */
function bucketOf(req: Request): string {
  const principal = (req.res?.locals.principal as Principal | undefined) ?? undefined;
  if (principal?.apiKeyId) return `key:${principal.apiKeyId}`;
  if (principal?.userId) return userKey(principal.userId);
  return addressKey(req);
}

export function createSecurity(deps: SecurityDeps): Security {
  const identity = new IdentityClient(deps.identityUrl, deps.internalTokenSecret);
  const authenticator = new Authenticator(deps.config.JWT_SECRET, deps.kv, identity, deps.clock);
  const usage = new ApiKeyUsage((uses) => identity.reportApiKeyUse(uses), deps.config.API_KEY_USAGE_FLUSH_MS ?? 15_000, deps.logger);
  // Authentication runs before the rate limit (the bucket depends on who is calling) but its
  // failure is raised after it, so requests with bad credentials still count, per address.
  const failures = new WeakMap<Request, AppError>();
  // Requests whose authentication waits until the limiter has let them through (see below).
  const deferred = new WeakSet<Request>();
  // Digests of API keys this gateway has recently seen authenticate (10 minutes, 10,000 at most).
  // Membership only spares a key the pre-authentication budget check (below); it grants nothing,
  // since every request is still authenticated in full.
  const recentKeys = new RecentSet(10 * 60_000, 10_000);
  // Addresses over budget that had an unknown key looked up in the last second: one lookup per second
  // each, so a key never used at this gateway keeps its own bucket (decisions §7) at a bounded cost.
  const overBudgetLookups = new RecentSet(1000, 10_000, deps.clock);

  const authentications = gatewayMetrics().authentications;
  const runAuthentication = async (req: Request, credential: Credential): Promise<void> => {
    const digest = credential.kind === "apiKey" ? digestApiKey(credential.key) : undefined;
    const kind = CREDENTIAL_KIND_LABELS[credential.kind];
    try {
      const principal = await authenticator.authenticate(credential);
      // A key used from outside its allow-list is refused before its own budget or its scopes are
      // looked at, and counts on the address: a leaked key tried from elsewhere spends nothing of its owner's.
      const allowList = authenticator.keyControls(principal)?.allowList;
      if (allowList && !allowList.allows(clientAddress(req))) throw errors.addressNotAllowed();
      req.res!.locals.principal = principal;
      authentications.labels(kind, "ok").inc();
      if (digest) recentKeys.add(digest);
      if (principal.apiKeyId) usage.record(principal.apiKeyId, canonicalAddress(clientAddress(req)));
    } catch (err) {
      if (!isAppError(err)) throw err;
      authentications.labels(kind, String(err.code)).inc();
      if (digest) recentKeys.delete(digest);
      if (err.code === ErrorCodes.unavailable) (req.log ?? deps.logger).error({ err: err.cause ?? err }, "authentication backend unavailable");
      failures.set(req, err);
    }
  };

  /**
   * Why this check exists: an API key is resolved through the shared store and, on a miss, identity
   * and its database, so a flood of random well-formed `svc_` keys would cost that I/O per request
   * even once the address is over its budget (such requests count per address, as they carry no
   * valid credential). So before that lookup, the address's budget is peeked (not counted): when it
   * is spent and the key is not one this gateway saw authenticate recently, authentication is put
   * off and the limiter, counting the request per address, answers 429000, except for one key a
   * second per address, which is looked up (a valid key never used here, fresh from creation, still
   * counts per key, as decisions §7 says; a flood costs one lookup a second). A JWT is verified locally
   * without I/O and keeps its per-user bucket; a key already verified here keeps its per-key bucket;
   * missing or malformed credentials fail without I/O and count per address as before.
   */
  const deferUntilLimited = async (req: Request, credential: Credential): Promise<boolean> => {
    if (credential.kind !== "apiKey" || !API_KEY_PATTERN.test(credential.key)) return false;
    if (recentKeys.has(digestApiKey(credential.key))) return false;
    if (!(await limiter.overBudget(addressKey(req)))) return false;
    const address = addressKey(req);
    if (overBudgetLookups.has(address)) return true;
    overBudgetLookups.add(address);
    return false;
  };

  const authenticate: RequestHandler = async (req, res, next) => {
    const route = res.locals.route as RouteLike | undefined;
    // Unknown routes (404000) and public routes are anonymous: they count per address.
    if (!route || route.public) return next();
    const credential = readCredential(req);
    if (await deferUntilLimited(req, credential)) deferred.add(req);
    else await runAuthentication(req, credential);
    next();
  };

  const limiter = createRateLimiter({
    max: deps.config.RATE_LIMIT_MAX,
    windowMs: deps.config.RATE_LIMIT_WINDOW_MS,
    ownMiddleware: deps.config.RATE_LIMIT_OWN_MIDDLEWARE,
    redisUrl: deps.redisUrl,
    redis: deps.redisUrl !== undefined && deps.kv instanceof RedisKvStore ? deps.kv.redis : undefined,
    logger: deps.logger,
    key: (req) => bucketOf(req),
    policyOf: (req) => {
      const principal = req.res?.locals.principal as Principal | undefined;
      const rateLimit = principal && authenticator.keyControls(principal)?.rateLimit;
      return rateLimit ? { max: rateLimit.max, windowMs: rateLimit.windowSeconds * 1000 } : undefined;
    },
  });

  // Not async unless it must wait: a promise per request costs a microtask turn for nothing.
  const authorize: RequestHandler = (req, res, next) => {
    // The address's window turned over between the peek and the count: authenticate after all.
    if (deferred.has(req)) {
      deferred.delete(req);
      return runAuthentication(req, readCredential(req)).then(() => authorize(req, res, next));
    }
    const failure = failures.get(req);
    if (failure) return next(failure);
    const route = res.locals.route as RouteLike | undefined;
    if (!route || route.public) return next();
    const principal = res.locals.principal as Principal | undefined;
    if (!principal) return next(errors.authenticationRequired());
    if (route.jwtOnly && principal.authType !== "jwt") return next(errors.insufficientPermissions());
    // A route open to self (PATCH /user/{own id}) lets a signed-in user through without the permission;
    // the service decides what they may change.
    if (!mayCallRoute(route, principal, () => (route.idSegment === undefined ? undefined : pathSegment(req.path, route.idSegment)))) {
      return next(errors.insufficientPermissions());
    }
    next();
  };

  // The CORS edge answers preflights and refuses `Origin: null` before the limiter runs; those
  // answers still carry the caller's current X-RateLimit-* figures (not counted).
  const peekWhenEdgeAnswers: RequestHandler = (req, res, next) => {
    const origin = req.headers.origin;
    const preflight = req.method === "OPTIONS" && origin !== undefined && req.headers["access-control-request-method"] !== undefined;
    if (preflight || origin === "null") return limiter.peek(req, res).then(() => next());
    next();
  };

  return {
    edge: [peekWhenEdgeAnswers, corsEdge(deps.config.CORS_ALLOWED_ORIGINS)],
    guard: [authenticate, limiter.middleware, authorize],
    close: async () => {
      await usage.close();
      await limiter.close();
    },
  };
}
