// Change-feed requests with `wait` (extensions §E6) hold no database work while they wait: each waits
// on a wake-up for its business, sent when the relay makes events readable (this process: the outbox
// store's callback; other processes: PostgreSQL NOTIFY, heard by feed-listener.ts).

export class FeedWaiters {
  private readonly waiting = new Map<string, Set<() => void>>();

  /**
   * A wake-up for `businessId`, registered now (before the caller reads, so an event made readable
   * between the read and the wait is not missed); `promise` settles on it or after `ms`.
   */
  register(businessId: string, ms: number): { promise: Promise<void>; cancel(): void } {
    let wake!: () => void;
    let timer: NodeJS.Timeout | undefined;
    const promise = new Promise<void>((resolve) => {
      wake = () => {
        clearTimeout(timer);
        this.waiting.get(businessId)?.delete(wake);
        if (this.waiting.get(businessId)?.size === 0) this.waiting.delete(businessId);
        resolve();
      };
    });
    timer = setTimeout(wake, ms);
    const set = this.waiting.get(businessId) ?? new Set();
    set.add(wake);
    this.waiting.set(businessId, set);
    return { promise, cancel: wake };
  }

  /** Wakes the waiters of these businesses; `"*"`: every waiter (a notification too long to name them, or a reconnect). */
  wake(businessIds: ReadonlySet<string> | "*"): void {
    const sets = businessIds === "*" ? [...this.waiting.values()] : [...businessIds].flatMap((id) => this.waiting.get(id) ?? []);
    for (const set of sets) for (const wake of [...set]) wake();
  }

  /** Requests waiting now (for tests and metrics). */
  get size(): number {
    let n = 0;
    for (const set of this.waiting.values()) n += set.size;
    return n;
  }
}
