export interface ConcurrencyLimits {
  /** Attempts in flight across all keys (default 50). */
  maxInFlight?: number;
  /** Attempts in flight per key, i.e. per webhook (default 2). */
  maxPerKey?: number;
}

export interface ConcurrencyLimiter {
  /** Runs `task` once both limits allow it; settles exactly as `task` does. */
  run<T>(key: string, task: () => Promise<T>): Promise<T>;
  /** Tasks running now. */
  readonly inFlight: number;
  /** Tasks waiting for a slot. */
  readonly queued: number;
}

interface Waiter {
  seq: number;
  start: () => void;
}

/**
 * Bounds outgoing deliveries so one slow receiver cannot delay everyone else: it can hold at most
 * `maxPerKey` slots, and a task whose key is saturated never blocks tasks of other keys queued
 * behind it. Among tasks that may start, the one queued first starts first.
 */
export function createConcurrencyLimiter(limits: ConcurrencyLimits = {}): ConcurrencyLimiter {
  const maxInFlight = limits.maxInFlight ?? 50;
  const maxPerKey = limits.maxPerKey ?? 2;
  if (!Number.isInteger(maxInFlight) || maxInFlight < 1) throw new RangeError(`maxInFlight must be an integer >= 1, got ${maxInFlight}`);
  if (!Number.isInteger(maxPerKey) || maxPerKey < 1) throw new RangeError(`maxPerKey must be an integer >= 1, got ${maxPerKey}`);

  let inFlight = 0;
  let queued = 0;
  let nextSeq = 0;
  const runningPerKey = new Map<string, number>();
  // Waiters grouped per key (FIFO inside a key), so picking the next task costs O(keys waiting)
  // rather than a scan over every queued task.
  const waitingPerKey = new Map<string, Waiter[]>();

  function canStart(key: string): boolean {
    return inFlight < maxInFlight && (runningPerKey.get(key) ?? 0) < maxPerKey;
  }

  function acquire(key: string): void {
    inFlight += 1;
    runningPerKey.set(key, (runningPerKey.get(key) ?? 0) + 1);
  }

  function release(key: string): void {
    inFlight -= 1;
    const running = (runningPerKey.get(key) ?? 1) - 1;
    if (running === 0) runningPerKey.delete(key);
    else runningPerKey.set(key, running);
    drain();
  }

  /** Starts waiting tasks while slots are free, oldest eligible first. */
  function drain(): void {
    while (inFlight < maxInFlight) {
      let bestKey: string | undefined;
      let best: Waiter | undefined;
      for (const [key, waiters] of waitingPerKey) {
        const head = waiters[0];
        if (head !== undefined && canStart(key) && (best === undefined || head.seq < best.seq)) {
          best = head;
          bestKey = key;
        }
      }
      if (best === undefined || bestKey === undefined) return;
      const waiters = waitingPerKey.get(bestKey)!;
      waiters.shift();
      if (waiters.length === 0) waitingPerKey.delete(bestKey);
      queued -= 1;
      acquire(bestKey);
      best.start();
    }
  }

  function run<T>(key: string, task: () => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const start = (): void => {
        let result: Promise<T>;
        try {
          result = Promise.resolve(task());
        } catch (err) {
          // A task that throws synchronously must still give its slot back.
          result = Promise.reject(err);
        }
        // The slot is given back before the caller sees the result, so `inFlight` is already
        // accurate when its continuation runs.
        result.then(
          (value) => {
            release(key);
            resolve(value);
          },
          (err: unknown) => {
            release(key);
            reject(err);
          },
        );
      };
      // Anyone already waiting for this key goes first, even if a slot is free right now.
      if (canStart(key) && !waitingPerKey.has(key)) {
        acquire(key);
        start();
        return;
      }
      const waiters = waitingPerKey.get(key) ?? [];
      waiters.push({ seq: nextSeq++, start });
      waitingPerKey.set(key, waiters);
      queued += 1;
    });
  }

  return {
    run,
    get inFlight() {
      return inFlight;
    },
    get queued() {
      return queued;
    },
  };
}
