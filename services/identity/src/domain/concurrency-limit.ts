// A bound on concurrent work with a bounded queue in front of it: at most `concurrency` tasks run at
// once, at most `queueLimit` wait for a slot, and one more is refused at once with an estimate of when
// to try again. Password hashing runs through one (password-hasher.ts): scrypt holds a thread of
// libuv's pool (4 threads unless UV_THREADPOOL_SIZE says otherwise) for its whole run, and that pool
// also serves DNS lookups, file reads and zlib, so a flood of hashes must never take all of it.

/** The queue is full; `retryAfterMs` estimates when a slot will have come free for a new task. */
export class QueueFull extends Error {
  constructor(readonly retryAfterMs: number) {
    super("queue full");
  }
}

export class ConcurrencyLimit {
  private running = 0;
  private readonly waiting: Array<() => void> = [];
  /** Moving average of a task's duration (ms), for the estimate a refusal carries; 0 until one ran. */
  private averageMs = 0;

  constructor(
    private readonly concurrency: number,
    private readonly queueLimit: number,
    private readonly now: () => number = performance.now.bind(performance),
  ) {
    if (concurrency < 1 || queueLimit < 0) throw new RangeError("concurrency must be at least 1 and queueLimit at least 0");
  }

  /** Tasks running and waiting now. */
  get load(): { running: number; waiting: number } {
    return { running: this.running, waiting: this.waiting.length };
  }

  /** Runs `task` once a slot is free; throws QueueFull, without running it, when the queue is full. */
  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.running < this.concurrency) this.running += 1;
    else if (this.waiting.length < this.queueLimit) await new Promise<void>((resolve) => this.waiting.push(resolve));
    else throw new QueueFull(Math.ceil(((this.waiting.length + 1) / this.concurrency) * this.averageMs));
    const started = this.now();
    try {
      return await task();
    } finally {
      const took = this.now() - started;
      this.averageMs = this.averageMs === 0 ? took : this.averageMs * 0.8 + took * 0.2;
      // The slot passes straight to the next waiter, so a newcomer never overtakes the queue.
      const next = this.waiting.shift();
      if (next) next();
      else this.running -= 1;
    }
  }
}
