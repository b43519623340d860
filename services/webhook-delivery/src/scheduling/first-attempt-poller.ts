import type { Logger } from "@crm/logger";
import type { AttemptExecutor } from "./attempt-executor";

export interface FirstAttemptPollerOptions {
  executor: AttemptExecutor;
  /** How often to look for first attempts nobody has claimed. */
  intervalMs: number;
  logger: Logger;
}

/**
 * First attempts are durable before they are sent, and the instance that consumed an event claims only
 * what it has room for. This poller lets every instance take the rest while it has room: with two
 * instances, one business's deliveries are sent by both, not only by the owner of its partition, and
 * after a crash the survivors pick up what was left at once instead of at the next retry cycle.
 * Unlike the retry cycle it takes only never-attempted (PENDING) deliveries, so retries keep their
 * schedule and batch size.
 */
export class FirstAttemptPoller {
  private timer: NodeJS.Timeout | undefined;
  private current: Promise<void> = Promise.resolve();
  private stopped = true;

  constructor(private readonly options: FirstAttemptPollerOptions) {}

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.schedule();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await this.current;
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.current = this.options.executor
        .pullFirstAttempts()
        .then(
          (claimed) => {
            if (claimed > 0) this.options.logger.debug({ claimed }, "first attempts taken over");
          },
          (err: unknown) => this.options.logger.error({ err }, "first-attempt poll failed"),
        )
        .finally(() => this.schedule());
    }, this.options.intervalMs);
    this.timer.unref();
  }
}
