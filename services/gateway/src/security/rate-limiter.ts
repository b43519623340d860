// The global rate limit (interface §8, decisions §7, §8): RATE_LIMIT_MAX requests per
// RATE_LIMIT_WINDOW_MS (fixed window), per API key, else per user, else per client address. Counted
// in Redis when configured, so every gateway instance spends one budget. If the store fails, the
// limit fails open: the request goes on, with a logged warning (availability over strictness; the
// authentication path, which must not fail open, answers 503000 on its own).
import type { Request, RequestHandler } from "express";
import type { Response } from "express";
import { ipKeyGenerator, MemoryStore, rateLimit, type ClientRateLimitInfo, type IncrementResponse, type Options, type Store } from "express-rate-limit";
import Redis from "ioredis";
import { RedisStore } from "rate-limit-redis";
import { errors } from "@crm/errors";
import type { Logger } from "@crm/logger";
import { gatewayMetrics } from "@crm/telemetry";

export interface RateLimitOptions {
  max: number;
  windowMs: number;
  redisUrl?: string;
  logger: Logger;
  /** The caller's bucket; see `rateLimitKey`. */
  key: (req: Request) => string;
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
  /**
   * Counts a request in `key`'s bucket now, before the middleware asks for it: the gateway starts
   * the count for a JWT's user while it reads the auth state, so the two Redis commands overlap
   * instead of following each other. The middleware's own count for `key` then takes this one.
   * Every `countEarly` is matched by that count or by `withdrawEarly`.
   */
  countEarly(key: string): void;
  /** The request counted early under `key` ended in another bucket (its authentication failed): take the count back. */
  withdrawEarly(key: string): void;
  close(): Promise<void>;
}

const WARN_EVERY_MS = 10_000;

/** Wraps a store so a failure lets the request through (fail open) and is logged, at most every 10 s. */
class FailOpenStore implements Store {
  private windowMs = 60_000;
  private lastWarning = 0;
  readonly prefix?: string;

  constructor(
    private readonly inner: Store,
    private readonly logger: Logger,
  ) {}

  init(options: Options): void {
    this.windowMs = options.windowMs;
    this.inner.init?.(options);
  }

  /** Counts started by `countEarly`, per key, each waiting for the middleware's count of that key. */
  private readonly early = new Map<string, Array<Promise<IncrementResponse>>>();

  countEarly(key: string): void {
    const queue = this.early.get(key);
    const counted = this.count(key);
    if (queue) queue.push(counted);
    else this.early.set(key, [counted]);
  }

  withdrawEarly(key: string): void {
    const counted = this.takeEarly(key);
    if (counted) void counted.then(() => this.decrement(key));
  }

  /** Counts of one key are interchangeable: any early one serves any request of that bucket. */
  private takeEarly(key: string): Promise<IncrementResponse> | undefined {
    const queue = this.early.get(key);
    if (!queue) return undefined;
    const counted = queue.shift();
    if (queue.length === 0) this.early.delete(key);
    return counted;
  }

  increment(key: string): Promise<IncrementResponse> {
    return this.takeEarly(key) ?? this.count(key);
  }

  private async count(key: string): Promise<IncrementResponse> {
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
}

export function createRateLimiter(options: RateLimitOptions): RateLimiter {
  let redis: Redis | undefined;
  let store: Store;
  if (options.redisUrl) {
    // A client of its own: short command time-out so a dead Redis costs a request ~1 s at most.
    // Auto-pipelining: the counts of requests handled in the same tick go out in one write.
    redis = new Redis(options.redisUrl, { maxRetriesPerRequest: 1, commandTimeout: 1000, enableAutoPipelining: true });
    redis.on("error", () => {
      /* reported through failed commands (FailOpenStore) and the gateway's readiness check */
    });
    const client = redis;
    const redisStore = new RedisStore({
      prefix: "crm:rl:",
      sendCommand: (command: string, ...args: string[]) => client.call(command, ...args) as Promise<never>,
    });
    // Script loading starts in the constructor; a Redis that is down at start must not crash the
    // process with an unhandled rejection (the store reloads the scripts on the next increment).
    redisStore.incrementScriptSha.catch(() => undefined);
    redisStore.getScriptSha.catch(() => undefined);
    store = redisStore;
  } else {
    store = new MemoryStore();
  }

  const refused = gatewayMetrics().rateLimited;
  const failOpen = new FailOpenStore(store, options.logger);
  const middleware = rateLimit({
    windowMs: options.windowMs,
    limit: options.max,
    store: failOpen,
    legacyHeaders: true,
    standardHeaders: "draft-8",
    keyGenerator: options.key,
    handler: (_req, _res, next) => {
      refused.inc();
      next(errors.tooManyRequests());
    },
    // Our key generator already folds IPv6 addresses to their /56; the checks only print to stderr.
    validate: false,
  });

  return {
    middleware,
    peek: async (req, res) => {
      const info = await Promise.resolve(middleware.getKey(options.key(req))).catch(() => undefined);
      const resetTime = info?.resetTime ?? new Date(Date.now() + options.windowMs);
      res.setHeader("X-RateLimit-Limit", String(options.max));
      res.setHeader("X-RateLimit-Remaining", String(Math.max(0, options.max - (info?.totalHits ?? 0))));
      res.setHeader("X-RateLimit-Reset", String(Math.ceil(resetTime.getTime() / 1000)));
    },
    overBudget: async (key) => {
      const info = await Promise.resolve(middleware.getKey(key)).catch(() => undefined);
      return info !== undefined && info.totalHits >= options.max && info.resetTime !== undefined && info.resetTime.getTime() > Date.now();
    },
    countEarly: (key) => failOpen.countEarly(key),
    withdrawEarly: (key) => failOpen.withdrawEarly(key),
    close: async () => {
      if (redis) await redis.quit().catch(() => redis?.disconnect());
    },
  };
}

/** Client address as the rate-limit bucket: IPv6 folded to its /56, so one host cannot rotate addresses. */
export function addressKey(req: Request): string {
  return `ip:${ipKeyGenerator(req.ip ?? req.socket.remoteAddress ?? "unknown")}`;
}
