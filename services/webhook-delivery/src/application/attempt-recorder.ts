import { isDependencyUnavailable } from "@crm/errors";
import type { AttemptRecord, DeliveryRepository, StartedAttempt } from "../persistence/delivery.repository";

interface Pending {
  /** performance.now() when it was queued. */
  queuedAt: number;
  /** Writes of this outcome that met an unreachable database so far. */
  failedWrites: number;
  started: StartedAttempt;
  outcome: AttemptRecord;
  at: Date;
  resolve: (recorded: boolean) => void;
  reject: (err: unknown) => void;
}

export interface AttemptRecorderOptions {
  deliveries: Pick<DeliveryRepository, "recordAttempts">;
  /** Outcomes written per statement at most (12 parameters each; PostgreSQL allows 65,535). */
  maxBatch?: number;
  /** Statements in flight at once. */
  maxConcurrent?: number;
  /**
   * How long an outcome may wait for others to share its statement (unless a batch is full).
   * Default 0: written as soon as a statement slot is free.
   */
  lingerMs?: number;
  /**
   * How long an outcome whose write met an unreachable database waits before it is written again
   * (doubling, at most 8x). Default 250 ms.
   */
  retryDelayMs?: number;
  /** The clock the lease is compared with (tests move it). Default Date.now. */
  now?: () => number;
}

/**
 * Writes attempt outcomes in batches (group commit): an outcome waits at most `lingerMs` for others
 * to join it (a full batch goes at once), then is written as soon as a statement slot is free, with
 * everything that finished meanwhile. Under load one statement records many, so the database work per
 * attempt falls as the rate rises: a statement's own cost dwarfs a row's (docs/performance.md D22). The wait delays only
 * the record, never a send: the sending slot is free before the outcome is queued. Each caller still
 * learns whether its own row was recorded (its lease may have been lost). A batch that fails is
 * retried row by row, so one bad row cannot fail the others.
 *
 * An outcome whose write met an unreachable database (a dropped connection, a failover) is written
 * again, with a growing delay, for as long as its lease lasts: the request was sent, and an outcome
 * that is never recorded lets the lease expire and the delivery be sent a second time (issue 42). Each
 * row is fenced by its lease, so writing it again after a write that did commit records nothing twice;
 * the caller then learns the lease is no longer its own.
 */
export class AttemptRecorder {
  private queue: Pending[] = [];
  private inFlight = 0;
  private timer: NodeJS.Timeout | undefined;
  private readonly maxBatch: number;
  private readonly maxConcurrent: number;
  private readonly lingerMs: number;
  private readonly retryDelayMs: number;
  private readonly now: () => number;

  constructor(private readonly options: AttemptRecorderOptions) {
    this.maxBatch = options.maxBatch ?? 200;
    this.maxConcurrent = options.maxConcurrent ?? 2;
    this.lingerMs = options.lingerMs ?? 0;
    this.retryDelayMs = options.retryDelayMs ?? 250;
    this.now = options.now ?? Date.now;
  }

  /** Resolves true once recorded, false when the lease was lost; rejects when the write failed. */
  record(started: StartedAttempt, outcome: AttemptRecord, at: Date): Promise<boolean> {
    return new Promise((resolve, reject) => {
      this.queue.push({ queuedAt: performance.now(), failedWrites: 0, started, outcome, at, resolve, reject });
      this.schedule();
    });
  }

  /** Writes now if a batch is full or the oldest outcome has waited long enough, else sets a timer. */
  private schedule(): void {
    if (this.queue.length === 0) return;
    const wait = this.queue.length >= this.maxBatch ? 0 : this.queue[0]!.queuedAt + this.lingerMs - performance.now();
    if (wait <= 0) {
      this.flush();
      return;
    }
    this.timer ??= setTimeout(() => {
      this.timer = undefined;
      this.flush();
    }, wait);
  }

  private flush(): void {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    while (this.inFlight < this.maxConcurrent && this.queue.length > 0) {
      const batch = this.queue.splice(0, this.maxBatch);
      this.inFlight += 1;
      void this.write(batch).finally(() => {
        this.inFlight -= 1;
        this.schedule();
      });
    }
  }

  private async write(batch: Pending[]): Promise<void> {
    try {
      const recorded = await this.options.deliveries.recordAttempts(batch);
      for (const item of batch) item.resolve(recorded.has(item.started.id));
    } catch (err) {
      if (batch.length === 1) {
        this.retryOrFail(batch[0]!, err);
        return;
      }
      for (const item of batch) await this.write([item]);
    }
  }

  /** Writes the outcome again later while its lease lasts and the database was only unreachable; else the caller learns why. */
  private retryOrFail(item: Pending, err: unknown): void {
    const delay = this.retryDelayMs * 2 ** Math.min(item.failedWrites, 3);
    if (!isDependencyUnavailable(err) || this.now() + delay >= item.started.leaseUntil.getTime()) {
      item.reject(err);
      return;
    }
    item.failedWrites += 1;
    setTimeout(() => {
      this.queue.push(item);
      this.schedule();
    }, delay).unref();
  }
}
