import type { EventEnvelope } from "@crm/contracts";
import type { Logger } from "@crm/logger";
import type { EventBus } from "./event-bus";

export interface OutboxRow {
  /** Monotonic sequence: publishing in this order keeps events in order per business. */
  sequence: bigint;
  topic: string;
  key: string;
  payload: EventEnvelope;
}

/** What the relay needs from the producing service's database. */
export interface OutboxStore {
  /** Unsent rows, lowest sequence first. */
  pending(limit: number): Promise<OutboxRow[]>;
  markSent(sequences: readonly bigint[]): Promise<void>;
  /**
   * One relay at a time per database, or two instances could publish a business's events out of
   * order. A lease row (holder + expiry) taken or renewed atomically; true when `holder` holds it.
   */
  acquireLease(holder: string, ttlMs: number): Promise<boolean>;
  releaseLease(holder: string): Promise<void>;
}

export interface OutboxRelayOptions {
  store: OutboxStore;
  bus: EventBus;
  logger: Logger;
  holder: string;
  /** Poll interval when idle; writes call `kick()` so events usually leave at once. */
  intervalMs?: number;
  batchSize?: number;
  leaseMs?: number;
}

/**
 * Publishes committed outbox rows and marks them sent: at least once (a crash between publish and
 * mark re-publishes; consumers dedupe on event id), in sequence order.
 */
export class OutboxRelay {
  private running = false;
  private loop: Promise<void> | undefined;
  private wake: (() => void) | undefined;
  private kicked = false;
  private readonly intervalMs: number;
  private readonly batchSize: number;
  private readonly leaseMs: number;

  constructor(private readonly options: OutboxRelayOptions) {
    this.intervalMs = options.intervalMs ?? 1000;
    this.batchSize = options.batchSize ?? 100;
    this.leaseMs = options.leaseMs ?? 15_000;
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.loop = this.run();
  }

  /** Something was committed: publish now rather than at the next poll. */
  kick(): void {
    this.kicked = true;
    this.wake?.();
  }

  /** Publishes what is pending once more, then stops (graceful shutdown flushes the outbox). */
  async stop(): Promise<void> {
    if (!this.running) return;
    this.running = false;
    this.wake?.();
    await this.loop;
    try {
      if (await this.options.store.acquireLease(this.options.holder, this.leaseMs)) await this.drain();
    } catch (err) {
      this.options.logger.warn({ err }, "outbox flush on shutdown failed; rows stay pending");
    } finally {
      await this.options.store.releaseLease(this.options.holder).catch(() => undefined);
    }
  }

  /** Publishes every pending row now; returns how many were published. */
  async drain(): Promise<number> {
    let published = 0;
    for (;;) {
      const rows = await this.options.store.pending(this.batchSize);
      if (rows.length === 0) return published;
      const byTopic = new Map<string, OutboxRow[]>();
      // Consecutive runs per topic keep the global sequence order within each topic.
      for (const row of rows) {
        const list = byTopic.get(row.topic) ?? [];
        list.push(row);
        byTopic.set(row.topic, list);
      }
      for (const [topic, list] of byTopic) {
        await this.options.bus.publish(
          topic,
          list.map((r) => ({ key: r.key, value: r.payload })),
        );
      }
      await this.options.store.markSent(rows.map((r) => r.sequence));
      published += rows.length;
      if (rows.length < this.batchSize) return published;
    }
  }

  private async run(): Promise<void> {
    let failures = 0;
    while (this.running) {
      this.kicked = false;
      let delay = this.intervalMs;
      try {
        if (await this.options.store.acquireLease(this.options.holder, this.leaseMs)) await this.drain();
        failures = 0;
      } catch (err) {
        failures += 1;
        delay = Math.min(this.intervalMs * 2 ** failures, 30_000);
        this.options.logger.warn({ err, failures }, "outbox relay could not publish; will retry");
      }
      if (this.running && !this.kicked) await this.sleep(delay);
    }
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.wake = () => {
        this.wake = undefined;
        done();
      };
    });
  }
}
