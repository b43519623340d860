// The global rate limit (interface §8, decisions §7, §8): RATE_LIMIT_MAX requests per
// RATE_LIMIT_WINDOW_MS (fixed window), per API key, else per user, else per client address. Counted
// in Redis when configured, so every gateway instance spends one budget. If the store fails, the
// limit fails open: the request goes on, with a logged warning (availability over strictness; the
// authentication path, which must not fail open, answers 503000 on its own).
//
// The middleware is the gateway's own, with express-rate-limit's headers exactly (X-RateLimit-*,
// draft-8 RateLimit / RateLimit-Policy, Retry-After on 429): its generic middleware awaited six
// times per request and hashed the bucket's key for `pk` on every request.
import { createHash } from "node:crypto";
import type { Request, RequestHandler, Response } from "express";
import { ipKeyGenerator, MemoryStore, type Options } from "express-rate-limit";
import Redis from "ioredis";
import { RedisStore } from "rate-limit-redis";
import { errors } from "@crm/errors";
import type { Logger } from "@crm/logger";
import { gatewayMetrics } from "@crm/telemetry";

export interface RateLimitOptions {
  max: number;
  windowMs: number;
  redisUrl?: string;
  /**
   * A Redis connection to count on instead of a client of the limiter's own (`redisUrl` is then
   * unused): the auth-state store's, so a request's auth read and its count leave in one write and
   * come back in one read. It must bound its commands' waits (ioredis `commandTimeout`, as the
   * store's does). The limiter does not close it.
   */
  redis?: Redis;
  logger: Logger;
  /** The caller's bucket; see `rateLimitKey`. */
  key: (req: Request) => string;
  /**
   * The bucket's own limit when it has one (an API key's `rateLimit`, extensions §E3.2), else
   * undefined for `max` per `windowMs`. Asked after `key`, for the same request.
   */
  policyOf?: (req: Request) => RateLimitPolicy | undefined;
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
  /**
   * Counts a request in `key`'s bucket now, before the middleware asks for it: the gateway starts
   * the count for a JWT's user while it reads the auth state, so the two Redis commands overlap
   * instead of following each other. The middleware's own count for `key` then takes this one.
   * Every `countEarly` is matched by that count or by `withdrawEarly`.
   */
  countEarly(key: string): void;
  /** The request counted early under `key` ended in another bucket (its authentication failed): take the count back. */
  withdrawEarly(key: string): void;
  /**
   * Whether `key`'s bucket had budget left at its last count at this gateway (or its window has
   * turned over since); false for a bucket not counted here yet. A guess, not a count: other
   * gateways spend the same budget, and requests in flight are not counted yet.
   */
  likelyWithinBudget(key: string): boolean;
  close(): Promise<void>;
}

/** One bucket's count in the current window, as the store answered it. */
export interface WindowCount {
  totalHits: number;
  resetTime: Date;
}

/** Where the counts live: in this process, or in Redis shared by every gateway. */
export interface CountStore {
  increment(key: string): Promise<WindowCount>;
  get(key: string): Promise<WindowCount | undefined>;
  decrement(key: string): Promise<void>;
}

const WARN_EVERY_MS = 10_000;

/** Wraps a store so a failure lets the request through (fail open) and is logged, at most every 10 s. */
class FailOpenStore {
  private lastWarning = 0;
  /** Counts started by `countEarly`, per key, each waiting for the middleware's count of that key. */
  private readonly early = new Map<string, Array<Promise<WindowCount>>>();

  constructor(
    private readonly inner: CountStore,
    private readonly windowMs: number,
    private readonly logger: Logger,
  ) {}

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
  private takeEarly(key: string): Promise<WindowCount> | undefined {
    const queue = this.early.get(key);
    if (!queue) return undefined;
    const counted = queue.shift();
    if (queue.length === 0) this.early.delete(key);
    return counted;
  }

  increment(key: string): Promise<WindowCount> {
    return this.takeEarly(key) ?? this.count(key);
  }

  private count(key: string): Promise<WindowCount> {
    return this.inner.increment(key).catch((err: unknown) => {
      const now = Date.now();
      if (now - this.lastWarning > WARN_EVERY_MS) {
        this.lastWarning = now;
        this.logger.warn({ err }, "rate-limit store unavailable; requests are not being rate limited");
      }
      return { totalHits: 0, resetTime: new Date(now + this.windowMs) };
    });
  }

  async get(key: string): Promise<WindowCount | undefined> {
    try {
      return await this.inner.get(key);
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
}

/** express-rate-limit's MemoryStore, answering copies: it hands out its live, mutable entry. */
class MemoryCountStore implements CountStore {
  private readonly store = new MemoryStore();

  constructor(windowMs: number) {
    this.store.init({ windowMs } as Options);
  }

  async increment(key: string): Promise<WindowCount> {
    const { totalHits, resetTime } = await this.store.increment(key);
    return { totalHits, resetTime: new Date(resetTime!.getTime()) };
  }

  async get(key: string): Promise<WindowCount | undefined> {
    const info = await this.store.get(key);
    return info?.resetTime ? { totalHits: info.totalHits, resetTime: new Date(info.resetTime.getTime()) } : undefined;
  }

  decrement(key: string): Promise<void> {
    return this.store.decrement(key);
  }

  close(): void {
    this.store.shutdown();
  }
}

/** A command that has not answered within the limiter's time-out fails (and the limit fails open). */
const COMMAND_TIMEOUT_MS = 1000;

type SendCommand = (command: string, ...args: string[]) => Promise<unknown>;

/** rate-limit-redis's fixed window (its Lua scripts, keys `crm:rl:<bucket>`). */
class RedisCountStore implements CountStore {
  private readonly store: RedisStore;

  constructor(sendCommand: SendCommand, windowMs: number) {
    this.store = new RedisStore({ prefix: "crm:rl:", sendCommand: sendCommand as (...args: string[]) => Promise<never> });
    // Script loading starts in the constructor; a Redis that is down at start must not crash the
    // process with an unhandled rejection (the store reloads the scripts on the next increment).
    this.store.incrementScriptSha.catch(() => undefined);
    this.store.getScriptSha.catch(() => undefined);
    this.store.init({ windowMs } as Options);
  }

  async increment(key: string): Promise<WindowCount> {
    const { totalHits, resetTime } = await this.store.increment(key);
    return { totalHits, resetTime: resetTime! };
  }

  async get(key: string): Promise<WindowCount | undefined> {
    const info = await this.store.get(key);
    return info?.resetTime ? { totalHits: info.totalHits, resetTime: info.resetTime } : undefined;
  }

  decrement(key: string): Promise<void> {
    return this.store.decrement(key);
  }
}

/**
 * Express's res.append: for a header not set yet it is res.setHeader with the text (what this does
 * without its get, concat and set work per request); a header already set gets the new value added.
 */
function appendHeader(res: Response, name: string, value: string): void {
  if (res.getHeader(name) === undefined) res.setHeader(name, value);
  else res.append(name, value);
}

/** Most policy values remembered (one per bucket seen); the map is emptied when full. */
const PARTITION_KEYS_MAX = 10_000;

/** The response headers of one counted request, exactly as express-rate-limit sets them. */
class RateLimitHeaders {
  private readonly windowSeconds: number;
  /** The draft-8 policy name, e.g. `50-in-1min`. */
  private readonly name: string;
  /** RateLimit-Policy by bucket. */
  private readonly partitionKeys = new Map<string, string>();
  private readonly limitText: string;

  constructor(
    private readonly max: number,
    windowMs: number,
  ) {
    this.windowSeconds = Math.ceil(windowMs / 1000);
    this.name = `${max}-in-${durationName(windowMs)}`;
    this.limitText = String(max);
  }

  /** Seconds until the window resets, never below 0. */
  resetSeconds(resetTime: Date): number {
    return Math.max(0, Math.ceil((resetTime.getTime() - Date.now()) / 1000));
  }

  set(res: Response, key: string, count: WindowCount): void {
    if (res.headersSent) return;
    const remaining = Math.max(this.max - count.totalHits, 0);
    res.setHeader("X-RateLimit-Limit", this.limitText);
    res.setHeader("X-RateLimit-Remaining", String(remaining));
    res.setHeader("X-RateLimit-Reset", String(Math.ceil(count.resetTime.getTime() / 1000)));
    appendHeader(res, "RateLimit", `"${this.name}"; r=${remaining}; t=${this.resetSeconds(count.resetTime)}`);
    appendHeader(res, "RateLimit-Policy", this.policy(key));
  }

  /**
   * The bucket's RateLimit-Policy value, built once per bucket: draft-8's `pk` is the first 12 hex
   * digits of the key's SHA-256, in base64 (one hash per bucket, not per request).
   */
  private policy(key: string): string {
    let policy = this.partitionKeys.get(key);
    if (policy === undefined) {
      const pk = Buffer.from(createHash("sha256").update(key).digest("hex").slice(0, 12)).toString("base64");
      policy = `"${this.name}"; q=${this.max}; w=${this.windowSeconds}; pk=:${pk}:`;
      if (this.partitionKeys.size >= PARTITION_KEYS_MAX) this.partitionKeys.clear();
      this.partitionKeys.set(key, policy);
    }
    return policy;
  }
}

/** express-rate-limit's names for a window: `30sec`, `1min`, `2hrs`, `1day`. */
function durationName(windowMs: number): string {
  const seconds = windowMs / 1000;
  const minutes = seconds / 60;
  const hours = minutes / 60;
  const days = hours / 24;
  if (seconds < 60) return `${seconds}sec`;
  if (minutes < 60) return `${minutes}min`;
  if (hours < 24) return `${hours}hr${hours > 1 ? "s" : ""}`;
  return `${days}day${days > 1 ? "s" : ""}`;
}

export function createRateLimiter(options: RateLimitOptions): RateLimiter {
  /** The limiter's own client, closed with it. */
  let redis: Redis | undefined;
  let newStore: (windowMs: number) => CountStore;
  const memories: MemoryCountStore[] = [];
  if (options.redis) {
    // A shared connection bounds each of its commands itself (the auth-state store's command time-out).
    const shared = options.redis;
    newStore = (windowMs) => new RedisCountStore((command, ...args) => shared.call(command, ...args), windowMs);
  } else if (options.redisUrl) {
    // A client of its own: short command time-out so a dead Redis costs a request ~1 s at most.
    // Auto-pipelining: the counts of requests handled in the same tick go out in one write.
    const own = (redis = new Redis(options.redisUrl, { maxRetriesPerRequest: 1, commandTimeout: COMMAND_TIMEOUT_MS, enableAutoPipelining: true }));
    own.on("error", () => {
      /* reported through failed commands (FailOpenStore) and the gateway's readiness check */
    });
    newStore = (windowMs) => new RedisCountStore((command, ...args) => own.call(command, ...args), windowMs);
  } else {
    newStore = (windowMs) => {
      const memory = new MemoryCountStore(windowMs);
      memories.push(memory);
      return memory;
    };
  }

  const refused = gatewayMetrics().rateLimited;
  const failOpen = new FailOpenStore(newStore(options.windowMs), options.windowMs, options.logger);
  const headers = new RateLimitHeaders(options.max, options.windowMs);
  // Keys with a limit of their own: a store per window length (the stores' windows are fixed) and the
  // headers per limit, made on first use; at most 3,600 window lengths exist.
  const ownStores = new Map<number, FailOpenStore>();
  const ownHeaders = new Map<string, RateLimitHeaders>();
  const limitOf = (req: Request, key: string) => {
    const policy = options.policyOf?.(req);
    if (!policy || (policy.max === options.max && policy.windowMs === options.windowMs)) return { key, max: options.max, store: failOpen, headers };
    let store = ownStores.get(policy.windowMs);
    if (!store) ownStores.set(policy.windowMs, (store = new FailOpenStore(newStore(policy.windowMs), policy.windowMs, options.logger)));
    const name = `${policy.max}/${policy.windowMs}`;
    let own = ownHeaders.get(name);
    if (!own) {
      if (ownHeaders.size >= PARTITION_KEYS_MAX) ownHeaders.clear();
      ownHeaders.set(name, (own = new RateLimitHeaders(policy.max, policy.windowMs)));
    }
    // The window is part of the bucket: a count kept under another window length must not carry over.
    return { key: `${key}:w${policy.windowMs}`, max: policy.max, store, headers: own };
  };

  /** Each bucket's last count at this gateway, for `likelyWithinBudget`. */
  const lastCounts = new Map<string, WindowCount>();
  const middleware: RequestHandler = (req, res, next) => {
    const { key, max, store, headers } = limitOf(req, options.key(req));
    store.increment(key).then((count) => {
      if (lastCounts.size >= PARTITION_KEYS_MAX && !lastCounts.has(key)) lastCounts.clear();
      lastCounts.set(key, count);
      headers.set(res, key, count);
      if (count.totalHits > max) {
        if (!res.headersSent) res.setHeader("Retry-After", String(headers.resetSeconds(count.resetTime)));
        refused.inc();
        return next(errors.tooManyRequests());
      }
      next();
    }, next);
  };

  return {
    middleware,
    peek: async (req, res) => {
      const info = await failOpen.get(options.key(req));
      const resetTime = info?.resetTime ?? new Date(Date.now() + options.windowMs);
      res.setHeader("X-RateLimit-Limit", String(options.max));
      res.setHeader("X-RateLimit-Remaining", String(Math.max(0, options.max - (info?.totalHits ?? 0))));
      res.setHeader("X-RateLimit-Reset", String(Math.ceil(resetTime.getTime() / 1000)));
    },
    overBudget: async (key) => {
      const info = await failOpen.get(key);
      return info !== undefined && info.totalHits >= options.max && info.resetTime.getTime() > Date.now();
    },
    countEarly: (key) => failOpen.countEarly(key),
    withdrawEarly: (key) => failOpen.withdrawEarly(key),
    likelyWithinBudget: (key) => {
      const count = lastCounts.get(key);
      return count !== undefined && (count.totalHits < options.max || count.resetTime.getTime() <= Date.now());
    },
    close: async () => {
      for (const memory of memories) memory.close();
      if (redis) await redis.quit().catch(() => redis?.disconnect());
    },
  };
}

/** Client address as the rate-limit bucket: IPv6 folded to its /56, so one host cannot rotate addresses. */
export function addressKey(req: Request): string {
  return `ip:${ipKeyGenerator(req.ip ?? req.socket.remoteAddress ?? "unknown")}`;
}
