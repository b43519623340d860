import type { Logger } from "@crm/logger";
import { startLoop, type Loop } from "@crm/service-kit";
import type { DeliveryScheduler } from "./delivery-scheduler";

export interface FirstAttemptPollerOptions {
  scheduler: Pick<DeliveryScheduler, "pullFirstAttempts" | "canPull" | "waitingForRoom" | "leftOutBusinesses">;
  /** How often to look for first attempts nobody has claimed. */
  intervalMs: number;
  /**
   * After a poll that found work: how often to check for room to claim the next batch (no query
   * until there is room), so an instance keeps taking a backlog at the pace it sends it, not one
   * batch per interval. Default 10 ms.
   */
  busyCheckMs?: number;
  logger: Logger;
}

/**
 * First attempts are durable before they are sent, and the instance that consumed an event claims only
 * what it has room for. This poller lets every instance take the rest while it has room: with two
 * instances, one business's deliveries are sent by both, not only by the owner of its partition, and
 * after a crash the survivors pick up what was left at once instead of at the next retry cycle.
 * Unlike the retry cycle it takes only PENDING deliveries (never attempted, or queued by a recovery,
 * which only it takes), so retries keep their schedule and batch size. While a backlog lasts (the last poll claimed something, or had to leave a
 * business out because this process already held all it may of it), it claims again as soon as there
 * is room for a batch; once a poll with room finds nothing and leaves nothing out, it is back to its
 * interval.
 */
export class FirstAttemptPoller {
  private loop: Loop | undefined;
  /** The last poll claimed something, or left a business out for want of room: more is probably due. */
  private busy = false;
  /** The last poll claimed something (not only left a business out). */
  private claimedLast = false;
  /** When the last query ran: while busy waiting for room, other businesses still get one per interval. */
  private lastQueryAt = 0;

  constructor(private readonly options: FirstAttemptPollerOptions) {}

  start(): void {
    if (this.loop) return;
    // A first poll at once: what a previous run (or a stopped instance) left is taken at start.
    this.loop = startLoop({
      turn: () => this.poll(),
      delayMs: () => (this.busy ? (this.options.busyCheckMs ?? 10) : this.options.intervalMs),
      onError: (err) => {
        this.busy = false;
        this.options.logger.error({ err }, "first-attempt poll failed");
      },
    });
  }

  async stop(): Promise<void> {
    const loop = this.loop;
    this.loop = undefined;
    await loop?.stop();
  }

  private async poll(): Promise<void> {
    const { scheduler } = this.options;
    if (this.busy) {
      // During a backlog, no query until there is room for a batch. After a poll that only left
      // businesses out (it claimed nothing), also none until one of those has room again: the others
      // had nothing due a moment ago, and are still looked at once per interval.
      if (!scheduler.canPull) return;
      if (!this.claimedLast && scheduler.waitingForRoom && Date.now() - this.lastQueryAt < this.options.intervalMs) return;
    }
    this.lastQueryAt = Date.now();
    const claimed = await scheduler.pullFirstAttempts();
    this.claimedLast = claimed > 0;
    this.busy = claimed > 0 || scheduler.leftOutBusinesses;
    if (claimed > 0) this.options.logger.debug({ claimed }, "first attempts taken over");
  }
}
