// The global rate limit (interface §8, decisions §7, §8): RATE_LIMIT_MAX requests per
// RATE_LIMIT_WINDOW_MS (fixed window), per API key, else per user, else per client address. Counted
// in Redis when configured, so every gateway instance spends one budget. If the store fails, the
// limit fails open: the request goes on, with a logged warning (availability over strictness; the
// authentication path, which must not fail open, answers 503000 on its own).
//
// express-rate-limit's legacy X-RateLimit-* headers, draft-8's RateLimit / RateLimit-Policy and
// Retry-After on 429, set by the gateway's own middleware (D6) or by express-rate-limit's;
// rate-limit-redis's store, or counts in memory.
import type { Request, RequestHandler, Response } from "express";
import { type ClientRateLimitInfo, type IncrementResponse, ipKeyGenerator, type Options, rateLimit, type Store } from "express-rate-limit";
import Redis from "ioredis";
import { RedisStore } from "rate-limit-redis";
import { errors } from "@crm/errors";
import type { Logger } from "@crm/logger";
import { gatewayMetrics } from "@crm/telemetry";
import { countingMiddleware } from "./rate-limit-counting";

export interface RateLimitOptions {
  max: number;
  windowMs: number;
  redisUrl?: string;
  /**
   * A Redis connection to count on instead of a client of the limiter's own (`redisUrl` is then
   * unused): the auth-state store's, so the gateway holds one connection. It must bound its
   * commands' waits (ioredis `commandTimeout`, as the store's does). The limiter does not close it.
   */
  redis?: Redis;
  logger: Logger;
  /** The caller's bucket; see `bucketOf` in security/index.ts. */
  key: (req: Request) => string;
  /**
   * The bucket's own limit when it has one (an API key's `rateLimit`, extensions §E3.2), else
   * undefined for `max` per `windowMs`. Asked after `key`, for the same request.
   */
  policyOf?: (req: Request) => RateLimitPolicy | undefined;
  /** RATE_LIMIT_OWN_MIDDLEWARE: the gateway's own middleware (D6, rate-limit-counting.ts) instead of express-rate-limit's; on when omitted. */
  ownMiddleware?: boolean;
}

/** A limit: `max` requests per fixed window of `windowMs`. */
export interface RateLimitPolicy {
  max: number;
  windowMs: number;
}

export interface RateLimiter {
  middleware: RequestHandler;
  /**
   * Sets the X-RateLimit-* headers from the caller's current window without counting the request:
   * for answers the edge gives before the limiter runs (preflights, `Origin: null` refusals), since
   * every response carries the headers.
   */
  peek(req: Request, res: Response): Promise<void>;
  /** Whether `key`'s window is already spent, without counting; false when the store cannot tell (fail open). */
  overBudget(key: string): Promise<boolean>;
  close(): Promise<void>;
}

const WARN_EVERY_MS = 10_000;

/**
 * The counting store, failing open: a failure lets the request through as the window's first (logged
 * at most every 10 s), where express-rate-limit's `passOnStoreError` would leave the answer without
 * its headers and log every request on the console.
 */
class FailOpenStore implements Store {
  private lastWarning = 0;
  private windowMs = 60_000;

  constructor(
    private readonly inner: Store,
    private readonly logger: Logger,
  ) {}

  init(options: Options): void {
    this.windowMs = options.windowMs;
    this.inner.init?.(options);
  }

  async increment(key: string): Promise<IncrementResponse> {
    try {
      return await this.inner.increment(key);
    } catch (err) {
      const now = Date.now();
      if (now - this.lastWarning > WARN_EVERY_MS) {
        this.lastWarning = now;
        this.logger.warn({ err }, "rate-limit store unavailable; requests are not being rate limited");
      }
      return { totalHits: 0, resetTime: new Date(now + this.windowMs) };
    }
  }

  async get(key: string): Promise<ClientRateLimitInfo | undefined> {
    try {
      return await this.inner.get?.(key);
    } catch {
      return undefined;
    }
  }

  async decrement(key: string): Promise<void> {
    try {
      await this.inner.decrement(key);
    } catch {
      /* fail open, as increment does */
    }
  }

  async resetKey(key: string): Promise<void> {
    await this.inner.resetKey(key);
  }

  shutdown(): void {
    if (this.inner instanceof MemoryCounts) this.inner.shutdown();
  }
}

/**
 * The counts in this process (no Redis). express-rate-limit's MemoryStore answers its live entry,
 * which the middleware reads after an await: in a burst every request read the burst's last count,
 * and all were refused though one had budget left (docs/security.md §9). This answers a copy.
 */
class MemoryCounts implements Store {
  readonly localKeys = true;
  private windowMs = 60_000;
  private readonly windows = new Map<string, { totalHits: number; resetMs: number }>();
  private sweep: NodeJS.Timeout | undefined;

  init(options: Options): void {
    this.windowMs = options.windowMs;
    clearInterval(this.sweep);
    this.sweep = setInterval(() => {
      const now = Date.now();
      for (const [key, window] of this.windows) if (window.resetMs <= now) this.windows.delete(key);
    }, this.windowMs).unref();
  }

  async increment(key: string): Promise<IncrementResponse> {
    const now = Date.now();
    let window = this.windows.get(key);
    if (!window || window.resetMs <= now) this.windows.set(key, (window = { totalHits: 0, resetMs: now + this.windowMs }));
    window.totalHits += 1;
    return { totalHits: window.totalHits, resetTime: new Date(window.resetMs) };
  }

  async get(key: string): Promise<ClientRateLimitInfo | undefined> {
    const window = this.windows.get(key);
    return window && window.resetMs > Date.now() ? { totalHits: window.totalHits, resetTime: new Date(window.resetMs) } : undefined;
  }

  async decrement(key: string): Promise<void> {
    const window = this.windows.get(key);
    if (window && window.totalHits > 0) window.totalHits -= 1;
  }

  async resetKey(key: string): Promise<void> {
    this.windows.delete(key);
  }

  shutdown(): void {
    clearInterval(this.sweep);
  }
}

/** A command that has not answered within the limiter's time-out fails (and the limit fails open). */
const COMMAND_TIMEOUT_MS = 1000;

export function createRateLimiter(options: RateLimitOptions): RateLimiter {
  /** The limiter's own client, closed with it. */
  let redis: Redis | undefined;
  let newCounts: () => Store;
  if (options.redis || options.redisUrl) {
    let client = options.redis;
    if (!client) {
      // A client of its own: short command time-out so a dead Redis costs a request ~1 s at most.
      client = redis = new Redis(options.redisUrl!, { maxRetriesPerRequest: 1, commandTimeout: COMMAND_TIMEOUT_MS, enableAutoPipelining: true });
      client.on("error", () => {
        /* reported through failed commands (FailOpenStore) and the gateway's readiness check */
      });
    }
    const connection = client;
    newCounts = () => {
      const store = new RedisStore({ prefix: "crm:rl:", sendCommand: (command: string, ...args: string[]) => connection.call(command, ...args) as Promise<never> });
      // Script loading starts in the constructor; a Redis that is down at start must not crash the
      // process with an unhandled rejection (the store reloads the scripts on the next increment).
      store.incrementScriptSha.catch(() => undefined);
      store.getScriptSha.catch(() => undefined);
      return store;
    };
  } else {
    newCounts = () => new MemoryCounts();
  }
  const store = new FailOpenStore(newCounts(), options.logger);
  const refused = gatewayMetrics().rateLimited;
  const refuse = (next: (err?: unknown) => void) => {
    refused.inc();
    next(errors.tooManyRequests());
  };
  const limiter = (windowMs: number, limit: number | ((req: Request) => number), counts: Store, key: (req: Request) => string): RequestHandler =>
    options.ownMiddleware === false
      ? rateLimit({
          windowMs,
          limit,
          legacyHeaders: true,
          standardHeaders: "draft-8",
          store: counts,
          keyGenerator: key,
          // The contract's envelope (429000) from the one error middleware; Retry-After is already set.
          handler: (_req, _res, next) => refuse(next),
          // A failed count is the window's first (FailOpenStore), not a misconfiguration.
          validate: { positiveHits: false },
        })
      : countingMiddleware({ windowMs, limit, store: counts, key, refuse });
  const global = limiter(options.windowMs, options.max, store, options.key);
  // Keys with a limit of their own (extensions §E3.2): express-rate-limit's window is fixed per
  // limiter, so one limiter (and store) per window length, made on first use; at most 3,600 exist.
  // The window is part of the bucket, so a count kept under another window length never carries over.
  const own = new Map<number, { middleware: RequestHandler; store: FailOpenStore }>();
  const ownLimiter = (policy: RateLimitPolicy) => {
    let entry = own.get(policy.windowMs);
    if (!entry) {
      const counts = new FailOpenStore(newCounts(), options.logger);
      const limitOf = (req: Request) => options.policyOf?.(req)?.max ?? options.max;
      entry = { middleware: limiter(policy.windowMs, limitOf, counts, (req) => `${options.key(req)}:w${policy.windowMs}`), store: counts };
      own.set(policy.windowMs, entry);
    }
    return entry.middleware;
  };
  const middleware: RequestHandler = (req, res, next) => {
    const policy = options.policyOf?.(req);
    if (!policy || (policy.max === options.max && policy.windowMs === options.windowMs)) return global(req, res, next);
    return ownLimiter(policy)(req, res, next);
  };

  return {
    middleware,
    peek: async (req, res) => {
      const info = await store.get(options.key(req));
      const resetTime = info?.resetTime ?? new Date(Date.now() + options.windowMs);
      res.setHeader("X-RateLimit-Limit", String(options.max));
      res.setHeader("X-RateLimit-Remaining", String(Math.max(0, options.max - (info?.totalHits ?? 0))));
      res.setHeader("X-RateLimit-Reset", String(Math.ceil(resetTime.getTime() / 1000)));
    },
    overBudget: async (key) => {
      const info = await store.get(key);
      return info !== undefined && info.totalHits >= options.max && info.resetTime !== undefined && info.resetTime.getTime() > Date.now();
    },
    close: async () => {
      store.shutdown();
      for (const entry of own.values()) entry.store.shutdown();
      if (redis) await redis.quit().catch(() => redis?.disconnect());
    },
  };
}

/** Client address as the rate-limit bucket: IPv6 folded to its /56, so one host cannot rotate addresses. */
export function addressKey(req: Request): string {
  return `ip:${ipKeyGenerator(req.ip ?? req.socket.remoteAddress ?? "unknown")}`;
}
