import Redis from "ioredis";
import type { KvStore } from "./kv-store";

/** How long close() waits for Redis to answer QUIT before dropping the connection. */
const QUIT_TIMEOUT_MS = 1000;
/**
 * Longest a command waits for its answer, queued while the connection is down included: a Redis that
 * is gone or hangs costs a request this long at most (authentication then answers 503000, the rate
 * limit fails open), never an open-ended wait.
 */
export const REDIS_COMMAND_TIMEOUT_MS = 1000;
/**
 * Longest pause between reconnection attempts (ioredis's default is 2 s): a Redis that comes back is
 * used again within this long, well inside the 2 s recovery goal (docs/operations.md).
 */
const RECONNECT_MAX_DELAY_MS = 250;

/** KvStore on Redis; `prefix` namespaces keys so one Redis can serve several deployments. */
export class RedisKvStore implements KvStore {
  readonly redis: Redis;

  constructor(
    url: string,
    private readonly prefix = "crm:",
  ) {
    // Commands issued while the connection is being made wait in the offline queue (a start, a short
    // blip), never beyond the command time-out: callers decide whether to fail closed (auth) or open
    // (rate limit). A read that Redis answers after a restart finds it empty: a miss, never a verdict.
    // Auto-pipelining: commands issued in the same tick (concurrent requests' reads) share one write.
    this.redis = new Redis(url, {
      maxRetriesPerRequest: 2,
      enableOfflineQueue: true,
      commandTimeout: REDIS_COMMAND_TIMEOUT_MS,
      retryStrategy: (attempt) => Math.min(attempt * 50, RECONNECT_MAX_DELAY_MS),
      lazyConnect: false,
      enableAutoPipelining: true,
    });
    // Queued commands help only while a connection is being made; once an attempt has failed, Redis
    // is away and a command fails at once (503000 for authentication) instead of waiting its time-out.
    this.redis.on("ready", () => {
      this.redis.options.enableOfflineQueue = true;
    });
    this.redis.on("error", () => {
      // Otherwise surfaced through command failures and readiness checks.
      if (this.redis.status !== "ready") this.redis.options.enableOfflineQueue = false;
    });
  }

  private k(key: string): string {
    return this.prefix + key;
  }

  async get(key: string): Promise<string | null> {
    return this.redis.get(this.k(key));
  }

  async getMany(keys: readonly string[]): Promise<Array<string | null>> {
    if (keys.length === 0) return [];
    return this.redis.mget(...keys.map((key) => this.k(key)));
  }

  async set(key: string, value: string, ttlMs?: number): Promise<void> {
    if (ttlMs === undefined) await this.redis.set(this.k(key), value);
    else await this.redis.set(this.k(key), value, "PX", Math.max(1, Math.ceil(ttlMs)));
  }

  async setIfAbsent(key: string, value: string, ttlMs: number): Promise<boolean> {
    return (await this.redis.set(this.k(key), value, "PX", Math.max(1, Math.ceil(ttlMs)), "NX")) === "OK";
  }

  async del(...keys: string[]): Promise<void> {
    if (keys.length > 0) await this.redis.del(...keys.map((key) => this.k(key)));
  }

  async increment(key: string, ttlMs: number): Promise<{ value: number; ttlMs: number }> {
    const full = this.k(key);
    const result = await this.redis
      .multi()
      .incr(full)
      .pexpire(full, Math.max(1, Math.ceil(ttlMs)), "NX")
      .pttl(full)
      .exec();
    const value = Number(result?.[0]?.[1] ?? 0);
    const ttl = Number(result?.[2]?.[1] ?? ttlMs);
    return { value, ttlMs: ttl < 0 ? ttlMs : ttl };
  }

  async addToSet(key: string, member: string, ttlMs?: number): Promise<void> {
    const full = this.k(key);
    if (ttlMs === undefined) {
      await this.redis.sadd(full, member);
      return;
    }
    // Extend, never shorten: the set lives as long as its longest-lived member.
    await this.redis.multi().sadd(full, member).pexpire(full, Math.ceil(ttlMs), "GT").pexpire(full, Math.ceil(ttlMs), "NX").exec();
  }

  async removeFromSet(key: string, member: string): Promise<void> {
    await this.redis.srem(this.k(key), member);
  }

  async members(key: string): Promise<string[]> {
    return this.redis.smembers(this.k(key));
  }

  async ping(): Promise<void> {
    await this.redis.ping();
  }

  /**
   * QUIT lets Redis answer what is in flight first; a Redis that accepts and never answers would hold
   * it (and a SIGTERM'd service) forever, so after QUIT_TIMEOUT_MS the socket is dropped instead.
   */
  async close(): Promise<void> {
    if (this.redis.status === "end") return;
    let timer: NodeJS.Timeout | undefined;
    const quit = this.redis.quit().then(
      () => "quit" as const,
      () => "failed" as const,
    );
    const outcome = await Promise.race([quit, new Promise<"timed out">((resolve) => (timer = setTimeout(resolve, QUIT_TIMEOUT_MS, "timed out")))]);
    clearTimeout(timer);
    if (outcome !== "quit") this.redis.disconnect();
  }
}
