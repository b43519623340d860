// Rate-limit counts in Redis, taken in blocks when a bucket is busy. The window is the one
// rate-limit-redis keeps (key `crm:rl:<bucket>`, the count of the window's requests, expiring with
// the window), so gateways of either kind share one budget; only how often each asks differs.
//
// A count is one INCRBY n: the store learns the new total T and owns the counts T-n+1 .. T, which it
// hands to its requests in order, so each request still gets its own count and its exact
// X-RateLimit-Remaining. n is 1 plus a prefetch: for a bucket this gateway sees at a high rate, the
// counts its next ~20 ms of requests will need, at most 1% of the budget left (so never with the
// default 50 a minute, where every request asks Redis as before). Requests that find no count
// waiting join the block about to be asked for (it leaves at the end of the event-loop turn, sized
// for all of them) or one asked for with room left, so a burst needs one command, not one each.
// What a prefetch costs: counts taken but not (yet) used are spent for the other gateways, who may
// be refused up to that many requests early; this gateway uses them first, so alone it is exact.
// Once a window is spent the store answers "over" itself until the window ends: a flood of refused
// requests costs Redis nothing.
import type Redis from "ioredis";
import type { CountStore, WindowCount } from "./rate-limiter";

/** How far ahead a busy bucket takes counts, in ms of its recent request rate. */
const PREFETCH_HORIZON_MS = 20;
/** Most counts taken ahead in one block. */
const PREFETCH_MAX = 256;
/** A prefetch spends at most this share of the budget still left in the window. */
const PREFETCH_BUDGET_SHARE = 0.01;
/** The request rate is re-estimated from at least this much time. */
const RATE_SAMPLE_MS = 10;
/** Buckets kept at most before expired ones are swept (each is a few numbers). */
const BUCKETS_SWEEP_AT = 10_000;

/** rate-limit-redis's fixed-window script, counting n at once. */
const INCREMENT_BY = `
local n = tonumber(ARGV[1])
local windowMs = tonumber(ARGV[2])
local ttl = redis.call("PTTL", KEYS[1])
if ttl <= 0 then
  redis.call("SET", KEYS[1], n, "PX", windowMs)
  return { n, windowMs }
end
return { redis.call("INCRBY", KEYS[1], n), ttl }
`;
const GET = `return { redis.call("GET", KEYS[1]), redis.call("PTTL", KEYS[1]) }`;

type Grant = (count: WindowCount) => void;

/** A block to ask for, or asked for and not answered yet: the requests waiting for its counts, in order. */
interface PendingBlock {
  /** Undefined until the command leaves: every request until then joins. */
  size: number | undefined;
  waiting: Array<{ grant: Grant; fail: (err: unknown) => void }>;
}

interface Bucket {
  /** When the window of the counts held here ends (ms since the epoch); 0: none held. */
  resetAt: number;
  /** Counts owned and not handed out: next .. last. */
  next: number;
  last: number;
  /** The highest total Redis reported in this window (plus what this store refused on its own). */
  known: number;
  pending: PendingBlock | undefined;
  /** Requests counted since `since`, for the rate estimate, and the prefetch it gave. */
  demand: number;
  since: number;
  prefetch: number;
}

interface LeasingRedis extends Redis {
  crmRateIncrementBy(key: string, n: number, windowMs: number): Promise<[number, number]>;
  crmRateGet(key: string): Promise<[string | null, number]>;
}

export class LeasedCountStore implements CountStore {
  private readonly redis: LeasingRedis;
  private readonly buckets = new Map<string, Bucket>();

  constructor(
    redis: Redis,
    private readonly max: number,
    private readonly windowMs: number,
    private readonly prefix = "crm:rl:",
  ) {
    redis.defineCommand("crmRateIncrementBy", { numberOfKeys: 1, lua: INCREMENT_BY });
    redis.defineCommand("crmRateGet", { numberOfKeys: 1, lua: GET });
    this.redis = redis as LeasingRedis;
  }

  increment(key: string): Promise<WindowCount> {
    const now = Date.now();
    const bucket = this.bucket(key, now);
    bucket.demand++;
    if (bucket.resetAt > now) {
      if (bucket.next <= bucket.last) return Promise.resolve({ totalHits: bucket.next++, resetTime: new Date(bucket.resetAt) });
      // Spent: every further count of this window is over the limit whoever takes it.
      if (bucket.known >= this.max) return Promise.resolve({ totalHits: ++bucket.known, resetTime: new Date(bucket.resetAt) });
    }
    return new Promise<WindowCount>((grant, fail) => {
      const pending = bucket.pending;
      if (pending && (pending.size === undefined || pending.waiting.length < pending.size)) pending.waiting.push({ grant, fail });
      else this.ask(key, bucket, { grant, fail });
    });
  }

  async get(key: string): Promise<WindowCount | undefined> {
    const [total, ttl] = await this.redis.crmRateGet(this.prefix + key);
    if (total === null || ttl <= 0) return undefined;
    // Counts this store holds unused are not requests yet.
    const bucket = this.buckets.get(key);
    const held = bucket && bucket.resetAt > Date.now() ? Math.max(0, bucket.last - bucket.next + 1) : 0;
    return { totalHits: Math.max(0, Number(total) - held), resetTime: new Date(Date.now() + ttl) };
  }

  async decrement(key: string): Promise<void> {
    const bucket = this.buckets.get(key);
    // A count this store refused on its own never reached Redis.
    if (bucket && bucket.resetAt > Date.now() && bucket.known > this.max) {
      bucket.known--;
      return;
    }
    await this.redis.decr(this.prefix + key);
  }

  private bucket(key: string, now: number): Bucket {
    let bucket = this.buckets.get(key);
    if (!bucket) {
      if (this.buckets.size >= BUCKETS_SWEEP_AT) this.sweep(now);
      bucket = { resetAt: 0, next: 1, last: 0, known: 0, pending: undefined, demand: 0, since: now, prefetch: 0 };
      this.buckets.set(key, bucket);
    }
    return bucket;
  }

  private sweep(now: number): void {
    for (const [key, bucket] of this.buckets) if (bucket.resetAt <= now && !bucket.pending) this.buckets.delete(key);
  }

  /**
   * Asks Redis for a block at the end of this event-loop turn (after the turn's other requests have
   * joined): a count for each waiting request, plus the prefetch; the rest is kept for later ones.
   */
  private ask(key: string, bucket: Bucket, first: PendingBlock["waiting"][number]): void {
    const pending: PendingBlock = { size: undefined, waiting: [first] };
    bucket.pending = pending;
    setImmediate(() => {
      const size = pending.waiting.length + this.prefetchOf(bucket, Date.now());
      pending.size = size;
      this.redis.crmRateIncrementBy(this.prefix + key, size, this.windowMs).then(
        ([total, ttl]) => {
          if (bucket.pending === pending) bucket.pending = undefined;
          const resetAt = Date.now() + ttl;
          const resetTime = new Date(resetAt);
          let next = total - size + 1;
          for (const waiter of pending.waiting) waiter.grant({ totalHits: next++, resetTime });
          // Replies come in order on the one connection, so `total` is the window's latest.
          bucket.resetAt = resetAt;
          bucket.known = total;
          bucket.next = next;
          bucket.last = total;
        },
        (err: unknown) => {
          if (bucket.pending === pending) bucket.pending = undefined;
          for (const waiter of pending.waiting) waiter.fail(err);
        },
      );
    });
  }

  /** Counts to take beyond the one asked for: ~20 ms of this bucket's recent rate, within 1% of the budget left. */
  private prefetchOf(bucket: Bucket, now: number): number {
    const elapsed = now - bucket.since;
    if (elapsed >= RATE_SAMPLE_MS) {
      bucket.prefetch = Math.floor((bucket.demand * PREFETCH_HORIZON_MS) / elapsed);
      bucket.demand = 0;
      bucket.since = now;
    }
    const left = this.max - (bucket.resetAt > now ? bucket.known : 0);
    return Math.max(0, Math.min(bucket.prefetch, PREFETCH_MAX, Math.floor(left * PREFETCH_BUDGET_SHARE)));
  }
}
