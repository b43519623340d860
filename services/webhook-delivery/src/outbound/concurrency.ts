export interface ConcurrencyLimits {
  /** Attempts in flight across all keys (default 50). */
  maxInFlight?: number;
  /** Attempts in flight per key, i.e. per webhook (default 2). */
  maxPerKey?: number;
  /** Attempts in flight per group, i.e. per business, whatever its number of webhooks (default: no bound). */
  maxPerGroup?: number;
}

export interface ConcurrencyLimiter {
  /**
   * Runs `task` once every limit allows it; settles exactly as `task` does. `group` (the business)
   * defaults to one group shared by every task.
   */
  run<T>(key: string, task: () => Promise<T>, group?: string): Promise<T>;
  /** Tasks running now. */
  readonly inFlight: number;
  /** Tasks waiting for a slot. */
  readonly queued: number;
}

interface Waiter {
  seq: number;
  start: () => void;
}

interface Group {
  running: number;
  /** When it last got a slot (a counter); a group new to the line has -1, so it goes first. */
  lastServed: number;
  /** Waiters per key (FIFO inside a key), so picking the next task scans keys, not every task. */
  waitingPerKey: Map<string, Waiter[]>;
}

const DEFAULT_GROUP = "";

function positiveInteger(name: string, value: number): number {
  if (value !== Infinity && (!Number.isInteger(value) || value < 1)) throw new RangeError(`${name} must be an integer >= 1, got ${value}`);
  return value;
}

/**
 * Bounds outgoing deliveries so slow receivers cannot delay everyone else:
 * - a webhook (key) holds at most `maxPerKey` slots, a business (group) at most `maxPerGroup`, so one
 *   business with hundreds of webhooks pointing at an endpoint that never answers leaves the other
 *   `maxInFlight - maxPerGroup` slots to everyone else;
 * - when a slot frees, businesses with waiting tasks take turns (round-robin), so a business with a
 *   long queue does not starve one with a short queue; inside a business, the task queued first whose
 *   webhook has room starts first;
 * - a task whose key or group is saturated never blocks tasks of other keys or groups.
 */
export function createConcurrencyLimiter(limits: ConcurrencyLimits = {}): ConcurrencyLimiter {
  const maxInFlight = positiveInteger("maxInFlight", limits.maxInFlight ?? 50);
  const maxPerKey = positiveInteger("maxPerKey", limits.maxPerKey ?? 2);
  const maxPerGroup = positiveInteger("maxPerGroup", limits.maxPerGroup ?? Infinity);

  let inFlight = 0;
  let queued = 0;
  let nextSeq = 0;
  const runningPerKey = new Map<string, number>();
  let serveCount = 0;
  const groups = new Map<string, Group>();

  const keyHasRoom = (key: string): boolean => (runningPerKey.get(key) ?? 0) < maxPerKey;

  function groupOf(name: string): Group {
    let group = groups.get(name);
    if (!group) groups.set(name, (group = { running: 0, lastServed: -1, waitingPerKey: new Map() }));
    return group;
  }

  function forgetIfIdle(name: string, group: Group): void {
    if (group.running === 0 && group.waitingPerKey.size === 0) groups.delete(name);
  }

  function acquire(key: string, group: Group): void {
    inFlight += 1;
    group.running += 1;
    runningPerKey.set(key, (runningPerKey.get(key) ?? 0) + 1);
  }

  function release(key: string, groupName: string): void {
    inFlight -= 1;
    const running = (runningPerKey.get(key) ?? 1) - 1;
    if (running === 0) runningPerKey.delete(key);
    else runningPerKey.set(key, running);
    const group = groups.get(groupName);
    if (group) {
      group.running -= 1;
      forgetIfIdle(groupName, group);
    }
    drain();
  }

  /** The oldest waiter of `group` whose key has room, if the group itself has room. */
  function nextOf(group: Group): { key: string; waiter: Waiter } | undefined {
    if (group.running >= maxPerGroup) return undefined;
    let best: { key: string; waiter: Waiter } | undefined;
    for (const [key, waiters] of group.waitingPerKey) {
      const head = waiters[0];
      if (head !== undefined && keyHasRoom(key) && (best === undefined || head.seq < best.waiter.seq)) best = { key, waiter: head };
    }
    return best;
  }

  /**
   * Starts waiting tasks while slots are free, one group at a time in turn: the group that may start
   * a task and was served longest ago (or never) goes next.
   */
  function drain(): void {
    while (inFlight < maxInFlight) {
      let chosen: { group: Group; key: string; waiter: Waiter } | undefined;
      for (const group of groups.values()) {
        if (chosen !== undefined && group.lastServed >= chosen.group.lastServed) continue;
        const next = nextOf(group);
        if (next !== undefined) chosen = { group, ...next };
      }
      if (chosen === undefined) return;
      const { group, key, waiter } = chosen;
      const waiters = group.waitingPerKey.get(key)!;
      waiters.shift();
      if (waiters.length === 0) group.waitingPerKey.delete(key);
      queued -= 1;
      acquire(key, group);
      group.lastServed = serveCount++;
      waiter.start();
    }
  }

  function run<T>(key: string, task: () => Promise<T>, groupName: string = DEFAULT_GROUP): Promise<T> {
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
            release(key, groupName);
            resolve(value);
          },
          (err: unknown) => {
            release(key, groupName);
            reject(err);
          },
        );
      };
      // Queued first, then started by drain() if a slot is free: a task never jumps ahead of tasks
      // already waiting that may start, and a saturated key or group never blocks the others.
      const group = groupOf(groupName);
      const waiters = group.waitingPerKey.get(key) ?? [];
      waiters.push({ seq: nextSeq++, start });
      group.waitingPerKey.set(key, waiters);
      queued += 1;
      drain();
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
