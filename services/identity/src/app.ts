import { Router, type Express } from "express";
import { internalAuditRouter } from "@crm/audit";
import { AuthCache } from "@crm/auth-cache";
import type { IdentityCapabilities } from "@crm/contracts";
import type { KvStore } from "@crm/kv-store";
import type { Logger } from "@crm/logger";
import { createServiceApp, type ReadinessCheck, type ServiceAppDevices } from "@crm/service-kit";
import type { IdentityConfig } from "./config";
import { PasswordHasher } from "./domain/password-hasher";
import { apiKeyRouter } from "./http/api-key.router";
import { authRouter, publicAuthRouter, type AuthRouterDeps } from "./http/auth.router";
import { internalRouter } from "./http/internal.router";
import { userRouter } from "./http/user.router";
import type { PrismaClient } from "./persistence/prisma";
import { AccountService } from "./application/account.service";
import { ApiKeyService } from "./application/api-key.service";
import { AuthStateService } from "./application/auth-state.service";
import { IdentityAudit } from "./application/identity-audit";
import { SessionService } from "./application/session.service";
import { SignInThrottle } from "./application/sign-in-throttle";
import { UserService } from "./application/user.service";

export interface AppDeps {
  config: Pick<
    IdentityConfig,
    | "ACCESS_TOKEN_TTL_S"
    | "REFRESH_TOKEN_TTL_S"
    | "ALLOW_SIGN_UP"
    | "RATE_LIMIT_KEY_MAX"
    | "PASSWORD_HASH_COST"
    | "PASSWORD_HASH_CONCURRENCY"
    | "PASSWORD_HASH_QUEUE"
    | "SIGN_IN_MAX_FAILURES"
    | "SIGN_IN_FAILURE_WINDOW_MS"
    | "SIGN_IN_LOCK_BASE_MS"
    | "SIGN_IN_LOCK_MAX_MS"
  >;
  logger: Logger;
  prisma: PrismaClient;
  kv: KvStore;
  jwtSecret: string;
  internalTokenSecret: string;
  readiness: ReadinessCheck[];
  /** Epoch ms for token lifetimes and sign-in locks; Date.now unless a test moves time itself. */
  clock?: () => number;
  /** Tuning devices of the service app turned off (serviceAppDevicesOf of the configuration). */
  appDevices?: ServiceAppDevices;
}

export function createApp(deps: AppDeps): Express {
  const { config, prisma, kv, logger, internalTokenSecret } = deps;
  const cache = new AuthCache(kv);
  const hasher = new PasswordHasher(config.PASSWORD_HASH_COST, { concurrency: config.PASSWORD_HASH_CONCURRENCY, queue: config.PASSWORD_HASH_QUEUE });
  const authState = new AuthStateService(prisma, cache);
  const clock = deps.clock ?? Date.now;
  const audit = new IdentityAudit(() => new Date(clock()));
  const sessions = new SessionService(
    prisma,
    cache,
    deps.jwtSecret,
    {
      accessTokenTtlS: config.ACCESS_TOKEN_TTL_S,
      refreshTokenTtlS: config.REFRESH_TOKEN_TTL_S,
    },
    clock,
    audit,
  );
  const throttle = new SignInThrottle(
    kv,
    {
      maxFailures: config.SIGN_IN_MAX_FAILURES,
      windowMs: config.SIGN_IN_FAILURE_WINDOW_MS,
      lockBaseMs: config.SIGN_IN_LOCK_BASE_MS,
      lockMaxMs: config.SIGN_IN_LOCK_MAX_MS,
    },
    clock,
  );
  const accounts = new AccountService(prisma, hasher, sessions, throttle, audit);
  const authDeps: AuthRouterDeps = {
    prisma,
    accounts,
    sessions,
    allowSignUp: config.ALLOW_SIGN_UP,
    refreshTokenTtlS: config.REFRESH_TOKEN_TTL_S,
  };

  const api = Router();
  api.use(authRouter(authDeps));
  api.use(userRouter(new UserService(prisma, hasher, sessions, authState, throttle, audit)));
  const apiKeys = new ApiKeyService(prisma, authState, { rateLimitKeyMax: config.RATE_LIMIT_KEY_MAX }, audit);
  api.use(apiKeyRouter(apiKeys));

  // sign-up, sign-in and token/refresh: forwarded by the gateway with an internal token naming no principal.
  return createServiceApp({
    logger,
    internalTokenSecret,
    readiness: deps.readiness,
    publicApi: publicAuthRouter(authDeps),
    api,
    internal: Router().use(internalRouter(authState, apiKeys)).use(internalAuditRouter(prisma, "identity")),
    devices: deps.appDevices,
    capabilities: {
      accessTokenTtlS: config.ACCESS_TOKEN_TTL_S,
      refreshTokenTtlS: config.REFRESH_TOKEN_TTL_S,
      signUpOpen: config.ALLOW_SIGN_UP,
      apiKeyRateLimitMax: config.RATE_LIMIT_KEY_MAX,
    } satisfies IdentityCapabilities,
  });
}
