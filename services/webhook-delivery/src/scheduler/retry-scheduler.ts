import type { Logger } from "@crm/logger";
import { startLoop, type Loop } from "@crm/service-kit";
import type { DeliveryRepository } from "../persistence/delivery.repository";
import type { DeliveryScheduler } from "./delivery-scheduler";

export interface RetrySchedulerOptions {
  deliveries: DeliveryRepository;
  scheduler: Pick<DeliveryScheduler, "pending" | "leaseFrom" | "run">;
  /** WEBHOOK_RETRY_INTERVAL_MS. */
  intervalMs: number;
  /** WEBHOOK_RETRY_BATCH_SIZE: due records claimed per cycle at most. */
  batchSize: number;
  /** Attempts this process keeps claimed or running at most; a cycle claims only what fits. */
  maxPending: number;
  logger: Logger;
  now?: () => Date;
}

/**
 * The retry cycle: every interval, claims the oldest due deliveries (at most one batch) and hands them
 * to the delivery scheduler without waiting for them, so a slow receiver never stalls the cycle. All state is
 * in the database: a restarted process, or any number of instances, just carry on.
 */
export class RetryScheduler {
  private loop: Loop | undefined;
  private readonly now: () => Date;

  constructor(private readonly options: RetrySchedulerOptions) {
    this.now = options.now ?? (() => new Date());
  }

  /** Runs a first cycle at once (work left by a previous run), then one per interval. */
  start(): void {
    if (this.loop) return;
    this.loop = startLoop({
      turn: async () => {
        const claimed = await this.runOnce();
        if (claimed > 0) this.options.logger.debug({ claimed }, "retry cycle");
      },
      delayMs: () => this.options.intervalMs,
      onError: (err) => this.options.logger.error({ err }, "retry cycle failed"),
    });
  }

  /** No new cycle starts; the current claim finishes (attempts themselves are drained by the delivery scheduler). */
  async stop(): Promise<void> {
    const loop = this.loop;
    this.loop = undefined;
    await loop?.stop();
  }

  /** One cycle; returns how many deliveries it claimed. Exposed for tests and tools. */
  async runOnce(): Promise<number> {
    const { deliveries, scheduler, batchSize, maxPending } = this.options;
    const limit = Math.min(batchSize, maxPending - scheduler.pending);
    if (limit < 1) return 0;
    const now = this.now();
    const claims = await deliveries.claimDue({ now, leaseUntil: scheduler.leaseFrom(now), limit });
    scheduler.run(claims);
    return claims.length;
  }
}
