// Test fixture: the security stages on a tiny express app shaped like the gateway (edge -> route
// match -> guard -> fake downstream that echoes the principal), a fake identity that answers the
// cache-miss endpoints from in-memory "tables", and helpers that issue credentials exactly as
// identity does (through @crm/auth-cache).
import http from "node:http";
import type { AddressInfo } from "node:net";
import express, { type Express } from "express";
import { type AccessTokenQuery, AccessTokenCodec, AuthCache, digestApiKey, generateApiKey, type ApiKeyAuthState, type ApiKeyRateLimit, type UserAuthState } from "@crm/auth-cache";
import { uuidv7, type Permission, type Role } from "@crm/contracts";
import { errorMiddleware, routeNotFound } from "@crm/errors";
import type { KvStore } from "@crm/kv-store";
import { createLogger, type Logger } from "@crm/logger";
import { requestContext, verifyInternalToken } from "@crm/service-kit";
import { matchRoute } from "../../src/http/route-table";
import { createSecurity, type Security, type SecurityConfig } from "../../src/security";

export const JWT_SECRET = "gateway-test-jwt-secret-long-enough-0123456789";
export const INTERNAL_SECRET = "gateway-test-internal-secret-long-enough-012345";

/** Identity's side: the database the fake internal endpoints read, and the writes identity makes. */
export class FakeIdentity {
  readonly users = new Map<string, UserAuthState>();
  readonly keys = new Map<string, ApiKeyAuthState>();
  /** Sessions by id: their user, and whether they were revoked. */
  readonly sessions = new Map<string, { userId: string; revoked: boolean }>();
  /** Every `lastUsedAt` report a gateway sent, in order. */
  readonly useReports: Array<Array<{ id: string; at: string; ip?: string }>> = [];
  /** Every access-token resolve request a gateway sent (its `tokens`), in order. */
  readonly accessTokenQueries: AccessTokenQuery[][] = [];
  calls = 0;
  private server?: http.Server;
  url = "";

  constructor(private readonly kv: KvStore) {}

  get cache(): AuthCache {
    return new AuthCache(this.kv);
  }

  async start(): Promise<void> {
    const app = express();
    app.use(express.json());
    app.use((req, _res, next) => {
      verifyInternalToken(req.get("x-internal-token") ?? "", INTERNAL_SECRET);
      this.calls += 1;
      next();
    });
    app.get("/internal/auth/users/:id", async (req, res) => {
      const id = String(req.params.id);
      const state = this.users.get(id) ?? { v: 1, userId: id, deleted: true };
      await this.cache.fillUser(state);
      res.json(state);
    });
    app.post("/internal/auth/access-tokens/resolve", async (req, res) => {
      const tokens = req.body.tokens as AccessTokenQuery[];
      this.accessTokenQueries.push(tokens);
      const verdicts = await Promise.all(
        tokens.map(async ({ jti, sessionId, userId, exp }) => {
          const ttlMs = exp * 1000 - Date.now();
          const session = this.sessions.get(sessionId);
          const user = this.users.get(userId);
          if (!session || session.revoked || session.userId !== userId || !user) {
            await this.cache.withdrawAccessToken(jti, sessionId, ttlMs);
            return { jti, live: false };
          }
          if (!(await this.cache.fillAccessToken(jti, sessionId, ttlMs))) return { jti, live: false };
          await this.cache.fillUser(user);
          return { jti, live: true, user };
        }),
      );
      res.json({ verdicts });
    });
    app.post("/internal/auth/api-keys/resolve", async (req, res) => {
      const digest = String(req.body.digest);
      const state = this.keys.get(digest) ?? { v: 1, unknown: true };
      await this.cache.fillApiKey(digest, state);
      res.json(state);
    });
    app.post("/internal/auth/api-keys/used", (req, res) => {
      this.useReports.push(req.body.uses);
      res.status(204).end();
    });
    app.use(errorMiddleware(() => ({ error: () => undefined, warn: () => undefined, info: () => undefined })));
    this.server = http.createServer(app);
    await new Promise<void>((resolve) => this.server!.listen(0, "127.0.0.1", resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  /** A user in the "database"; cached only when `cached` (else the gateway must miss and ask). */
  async addUser(role: Role, opts: { businessId?: string | null; cached?: boolean } = {}): Promise<UserAuthState & { deleted: false }> {
    const state = { v: 1 as const, userId: uuidv7(), deleted: false as const, businessId: opts.businessId === undefined ? uuidv7() : opts.businessId, role };
    this.users.set(state.userId, state);
    if (opts.cached ?? true) await this.cache.writeUser(state);
    return state;
  }

  async setRole(user: UserAuthState & { deleted: false }, role: Role): Promise<void> {
    const next = { ...user, role };
    this.users.set(user.userId, next);
    await this.cache.writeUser(next);
  }

  /** Signs in: an allow-listed access token for a new session (only in the "database" unless `cached`). */
  async signIn(user: UserAuthState & { deleted: false }, ttlS = 1800, opts: { cached?: boolean } = {}): Promise<{ token: string; jti: string; sid: string }> {
    const jti = uuidv7();
    const sid = uuidv7();
    this.sessions.set(sid, { userId: user.userId, revoked: false });
    const token = new AccessTokenCodec(JWT_SECRET).sign({ sub: user.userId, businessId: user.businessId, jti, sid }, ttlS);
    if (opts.cached ?? true) await this.cache.allowAccessToken(jti, sid, ttlS * 1000);
    return { token, jti, sid };
  }

  /** Signs out: the session is revoked in the "database", then in the cache (tombstones), as identity does. */
  async revokeSession(sid: string): Promise<void> {
    const session = this.sessions.get(sid);
    if (session) session.revoked = true;
    await this.cache.revokeSession(sid, 1800_000);
  }

  async createKey(
    creator: UserAuthState & { deleted: false },
    opts: { scopes?: Permission[]; expiresAt?: string | null; cached?: boolean; allowedIps?: string[] | null; rateLimit?: ApiKeyRateLimit | null } = {},
  ): Promise<{ key: string; digest: string; id: string }> {
    const key = generateApiKey();
    const digest = digestApiKey(key);
    const state: ApiKeyAuthState & { unknown: false } = {
      v: 1,
      unknown: false,
      id: uuidv7(),
      businessId: creator.businessId!,
      createdByUserId: creator.userId,
      scopes: opts.scopes ?? [],
      expiresAt: opts.expiresAt ?? null,
      revoked: false,
      allowedIps: opts.allowedIps ?? null,
      rateLimit: opts.rateLimit ?? null,
    };
    this.keys.set(digest, state);
    if (opts.cached ?? true) await this.cache.writeApiKey(digest, state);
    return { key, digest, id: state.id };
  }

  async revokeKey(digest: string): Promise<void> {
    const state = this.keys.get(digest);
    if (!state || state.unknown) throw new Error("no such key");
    const revoked = { ...state, revoked: true };
    this.keys.set(digest, revoked);
    await this.cache.writeApiKey(digest, revoked);
  }
}

export interface Gateway {
  app: Express;
  security: Security;
  logs: string[];
  logger: Logger;
}

/** The gateway's pipeline around the security stages, with a downstream that echoes the principal. */
export function buildGateway(kv: KvStore, identityUrl: string, config: Partial<SecurityConfig> = {}, redisUrl?: string, clock?: () => number): Gateway {
  const logs: string[] = [];
  const logger = createLogger({ service: "gateway", level: "debug", destination: { write: (line: string) => void logs.push(line) } });
  const security = createSecurity({
    config: { CORS_ALLOWED_ORIGINS: ["https://app.example.com"], RATE_LIMIT_MAX: 1000, RATE_LIMIT_WINDOW_MS: 60_000, JWT_SECRET, ...config },
    kv,
    redisUrl,
    identityUrl,
    internalTokenSecret: INTERNAL_SECRET,
    logger,
    clock,
  });
  const app = express();
  app.disable("x-powered-by");
  app.use(requestContext(logger));
  app.use(security.edge);
  app.use((req, res, next) => {
    const route = matchRoute(req.method, req.path.length > 1 ? req.path.replace(/\/$/, "") : req.path);
    if (route) res.locals.route = route;
    next();
  });
  app.use(security.guard);
  app.use((_req, res, next) => {
    if (!res.locals.route) return next();
    res.json({ success: true, data: { route: res.locals.route.name, principal: res.locals.principal ?? null } });
  });
  app.use(routeNotFound);
  app.use(errorMiddleware((req) => req.log ?? logger));
  return { app, security, logs, logger };
}
