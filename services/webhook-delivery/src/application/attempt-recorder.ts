import type { AttemptRecord, DeliveryRepository, StartedAttempt } from "../persistence/delivery.repository";

interface Pending {
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
}

/**
 * Writes attempt outcomes in batches (group commit): an outcome is written at once when a statement
 * slot is free, and the outcomes that finish while statements are in flight go together in the next
 * one. When idle every outcome is written alone, as soon as it is known; under load, one statement
 * records many, so the database work per attempt falls as the rate rises. Each caller still learns
 * whether its own row was recorded (its lease may have been lost). A batch that fails is retried
 * row by row, so one bad row cannot fail the others.
 */
export class AttemptRecorder {
  private queue: Pending[] = [];
  private inFlight = 0;
  private readonly maxBatch: number;
  private readonly maxConcurrent: number;

  constructor(private readonly options: AttemptRecorderOptions) {
    this.maxBatch = options.maxBatch ?? 200;
    this.maxConcurrent = options.maxConcurrent ?? 2;
  }

  /** Resolves true once recorded, false when the lease was lost; rejects when the write failed. */
  record(started: StartedAttempt, outcome: AttemptRecord, at: Date): Promise<boolean> {
    return new Promise((resolve, reject) => {
      this.queue.push({ started, outcome, at, resolve, reject });
      this.flush();
    });
  }

  private flush(): void {
    while (this.inFlight < this.maxConcurrent && this.queue.length > 0) {
      const batch = this.queue.splice(0, this.maxBatch);
      this.inFlight += 1;
      void this.write(batch).finally(() => {
        this.inFlight -= 1;
        this.flush();
      });
    }
  }

  private async write(batch: Pending[]): Promise<void> {
    try {
      const recorded = await this.options.deliveries.recordAttempts(batch);
      for (const item of batch) item.resolve(recorded.has(item.started.id));
    } catch (err) {
      if (batch.length === 1) {
        batch[0]!.reject(err);
        return;
      }
      for (const item of batch) await this.write([item]);
    }
  }
}
