// The gateway's way of asking identity on a cache miss: the misses of one event-loop turn go in one
// request (up to `maxBatch` of them), a key already being asked for is not asked again, at most
// `maxInFlight` requests are out at once, and at most `maxWaiting` keys wait for a turn. After a
// cache lost its entries (a Redis restarted empty) every caller misses at once: this turns that
// burst into a few requests instead of one per request, and sheds what it cannot hold (503000)
// instead of queueing without end.
import { errors } from "@crm/errors";

export interface BatchedLookupOptions {
  /** Keys asked for in one request at most. */
  maxBatch: number;
  /** Requests out at once at most. */
  maxInFlight: number;
  /** Keys waiting for a request at most; beyond, a lookup fails at once with 503000. */
  maxWaiting: number;
}

interface Waiting<Q, V> {
  query: Q;
  answer: Promise<V>;
  resolve(value: V): void;
  reject(err: unknown): void;
}

export class BatchedLookup<Q, V> {
  /** Keys waiting for a request, in arrival order. */
  private readonly waiting = new Map<string, Waiting<Q, V>>();
  /** Keys whose request is out. */
  private readonly asked = new Map<string, Promise<V>>();
  private requests = 0;
  private flushScheduled = false;

  /** `load` answers a batch of queries by key; a key missing from its answer fails with 503000. */
  constructor(
    private readonly load: (queries: Q[]) => Promise<ReadonlyMap<string, V>>,
    private readonly options: BatchedLookupOptions,
  ) {}

  /** The answer for `query`, known by `key`. */
  get(key: string, query: Q): Promise<V> {
    const known = this.waiting.get(key)?.answer ?? this.asked.get(key);
    if (known) return known;
    if (this.waiting.size >= this.options.maxWaiting) return Promise.reject(errors.unavailable(undefined, { cause: new Error("too many cache misses waiting for identity") }));
    let resolve!: (value: V) => void;
    let reject!: (err: unknown) => void;
    const answer = new Promise<V>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    this.waiting.set(key, { query, answer, resolve, reject });
    this.scheduleFlush();
    return answer;
  }

  private scheduleFlush(): void {
    if (this.flushScheduled || this.requests >= this.options.maxInFlight) return;
    this.flushScheduled = true;
    // setImmediate, not a microtask: the misses of every request read in this turn join the batch.
    setImmediate(() => {
      this.flushScheduled = false;
      this.flush();
    });
  }

  private flush(): void {
    while (this.waiting.size > 0 && this.requests < this.options.maxInFlight) {
      const batch: Array<[string, Waiting<Q, V>]> = [];
      for (const entry of this.waiting) {
        batch.push(entry);
        if (batch.length >= this.options.maxBatch) break;
      }
      for (const [key, waiting] of batch) {
        this.waiting.delete(key);
        this.asked.set(key, waiting.answer);
      }
      this.requests += 1;
      this.load(batch.map(([, waiting]) => waiting.query))
        .then(
          (answers) => {
            for (const [key, waiting] of batch) {
              const value = answers.get(key);
              if (value === undefined) waiting.reject(errors.unavailable(undefined, { cause: new Error("identity's answer left a key out") }));
              else waiting.resolve(value);
            }
          },
          (err: unknown) => {
            for (const [, waiting] of batch) waiting.reject(err);
          },
        )
        .finally(() => {
          for (const [key] of batch) this.asked.delete(key);
          this.requests -= 1;
          if (this.waiting.size > 0) this.scheduleFlush();
        });
    }
  }
}
