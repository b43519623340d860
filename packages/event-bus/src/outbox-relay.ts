import type { Logger } from "@crm/logger";
import { outboxMetrics, startSpan } from "@crm/telemetry";
import { MessageRejectedError, type BusValue, type EventBus } from "./event-bus";
import { DEFAULT_MAX_BATCH_BYTES, encodedSize, publishBatches } from "./publish-batches";

export interface OutboxRow {
  /** Monotonic sequence: publishing in this order keeps events in order per business. */
  sequence: bigint;
  topic: string;
  key: string;
  /** The envelope, or its JSON as stored (published as it is, neither parsed nor serialised again). */
  payload: BusValue;
  /** W3C traceparent of the write, when it was traced: the message continues its trace. */
  traceparent?: string;
}

/** What the relay needs from the producing service's database. */
export interface OutboxStore {
  /** Unsent rows that are not dead-lettered, lowest sequence first. */
  pending(limit: number): Promise<OutboxRow[]>;
  markSent(sequences: readonly bigint[]): Promise<void>;
  /**
   * Optional: `markSent(sequences)` and then `pending(limit)` (without those rows) in one round trip.
   * A relay that keeps finding rows committed during its last publish then costs the database one
   * statement per publish instead of two.
   */
  markSentAndPending?(sequences: readonly bigint[], limit: number): Promise<OutboxRow[]>;
  /** Sets a row aside for good with the bus's reason: it leaves `pending` and is never published. */
  deadLetter(sequence: bigint, reason: string): Promise<void>;
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
  /** Rows read per round. */
  batchSize?: number;
  /** Budget of one publish request in encoded bytes (default 256 KiB); a larger row goes alone. */
  maxBatchBytes?: number;
  leaseMs?: number;
  /** The producing service, naming the relay's spans (tracing on). */
  serviceName?: string;
  /**
   * Under a stream of writes, how long the next read may wait for more rows (default 0: never). It
   * waits only after a read of at least `lingerRows` rows (not a full one), and only while writes keep
   * committing: it goes as soon as a read's worth of writes committed, or none did for 5 ms. Fewer,
   * larger publishes cost less per event here and in every consumer's batch (docs/performance.md).
   * An event that comes alone is read at once, as before.
   */
  lingerMs?: number;
  /** Rows a read must have found before the next one lingers (default 4). */
  lingerRows?: number;
  /** Milliseconds of a monotonic clock for the lease's half term (performance.now unless a test moves time). */
  leaseClock?: () => number;
}

/**
 * Longest pause between rounds after failures: a bus (or database) that comes back is published to
 * within about this long, even when no write kicks the relay. A round against a bus that is away
 * costs a connection attempt or two.
 */
const MAX_RETRY_DELAY_MS = 2_000;

/** A linger ends when no write committed for this long: the stream of writes has stopped. */
const LINGER_QUIET_MS = 5;

/** Counters a metrics endpoint can read. */
export interface OutboxRelayStats {
  /** Rows published and marked sent since start. */
  published: number;
  /** Rows the bus refused for good and that were set aside (see `OutboxStore.deadLetter`). */
  deadLettered: number;
}

/** Most characters of the bus's reason kept on a dead-lettered row. */
const MAX_REASON_LENGTH = 1000;

/**
 * Publishes committed outbox rows and marks them sent: at least once (a crash between publish and
 * mark re-publishes; consumers dedupe on event id), in sequence order. A transient failure stops the
 * round and is retried with back-off; a row the bus refuses for good (`MessageRejectedError`) is
 * dead-lettered, so it never blocks the rows behind it, of its own business or of any other.
 */
export class OutboxRelay {
  private running = false;
  private loop: Promise<void> | undefined;
  private wake: (() => void) | undefined;
  private kicked = false;
  private readonly intervalMs: number;
  private readonly batchSize: number;
  private readonly maxBatchBytes: number;
  private readonly leaseMs: number;
  private readonly lingerMs: number;
  private readonly lingerRows: number;
  /** kick() calls so far; a linger counts the writes committed since its read. */
  private kicks = 0;
  private lingerWake: (() => void) | undefined;
  private readonly counters: OutboxRelayStats = { published: 0, deadLettered: 0 };
  private readonly metrics = outboxMetrics();
  /** The lease clock's time until which the lease this relay took is still good for half its term. */
  private leaseFreshUntil = 0;

  constructor(private readonly options: OutboxRelayOptions) {
    this.intervalMs = options.intervalMs ?? 1000;
    this.batchSize = options.batchSize ?? 100;
    this.maxBatchBytes = options.maxBatchBytes ?? DEFAULT_MAX_BATCH_BYTES;
    this.leaseMs = options.leaseMs ?? 15_000;
    this.lingerMs = options.lingerMs ?? 0;
    this.lingerRows = options.lingerRows ?? 4;
  }

  /** A snapshot of the relay's counters. */
  stats(): OutboxRelayStats {
    return { ...this.counters };
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.loop = this.run();
  }

  /** Something was committed: publish now rather than at the next poll. */
  kick(): void {
    this.kicked = true;
    this.kicks += 1;
    this.wake?.();
    this.lingerWake?.();
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
      this.leaseFreshUntil = 0;
      await this.options.store.releaseLease(this.options.holder).catch(() => undefined);
    }
  }

  /** Publishes every pending row now; returns how many were published. */
  drain(): Promise<number> {
    return this.publishPending(false);
  }

  /**
   * With `whileLeased`, each read of pending rows first makes sure the lease is still held (renewing it
   * past half its term). The rows of a read's last publish are marked sent in the statement that reads
   * what is pending behind them (when the store can), so a relay kept busy by a stream of writes pays
   * one statement per publish, not a mark and a read.
   */
  private async publishPending(whileLeased: boolean): Promise<number> {
    const { store } = this.options;
    let published = 0;
    if (whileLeased && !(await this.holdLease())) return published;
    // A kick before this read is answered by it: its row was committed before the read was sent.
    this.kicked = false;
    let read = { at: performance.now(), kicks: this.kicks };
    let rows = await store.pending(this.batchSize);
    while (rows.length > 0) {
      let unmarked: bigint[] = [];
      for (const batch of publishBatches(rows, this.maxBatchBytes)) {
        published += await this.markSent(unmarked);
        unmarked = await this.publish(batch);
      }
      // Stopping: mark what went out and leave the rest to stop()'s own drain.
      const leased = !whileLeased || (this.running && (await this.holdLease()));
      if (leased && store.markSentAndPending) {
        if (rows.length >= this.lingerRows && rows.length < this.batchSize) await this.linger(read);
        this.kicked = false;
        read = { at: performance.now(), kicks: this.kicks };
        rows = await store.markSentAndPending(unmarked, this.batchSize);
        published += this.counted(unmarked.length);
        continue;
      }
      published += await this.markSent(unmarked);
      // A read that was not full had everything there was.
      if (!leased || rows.length < this.batchSize) return published;
      this.kicked = false;
      read = { at: performance.now(), kicks: this.kicks };
      rows = await store.pending(this.batchSize);
    }
    return published;
  }

  /**
   * Waits, up to `lingerMs` after the last read was sent, while writes keep committing: until a
   * read's worth of them has, or none has for LINGER_QUIET_MS, or the relay is stopping.
   */
  private async linger(read: { at: number; kicks: number }): Promise<void> {
    const until = read.at + this.lingerMs;
    for (;;) {
      const left = until - performance.now();
      if (left < 1 || !this.running || this.kicks - read.kicks >= this.batchSize) return;
      const kicks = this.kicks;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, Math.min(left, LINGER_QUIET_MS));
        const self = this;
        function done() {
          clearTimeout(timer);
          self.lingerWake = undefined;
          resolve();
        }
        this.lingerWake = done;
      });
      // A quiet spell: the writes have stopped, what is there goes now.
      if (this.kicks === kicks) return;
    }
  }

  /** Marks rows the bus accepted as sent; how many. */
  private async markSent(sequences: readonly bigint[]): Promise<number> {
    if (sequences.length === 0) return 0;
    await this.options.store.markSent(sequences);
    return this.counted(sequences.length);
  }

  private counted(rows: number): number {
    this.counters.published += rows;
    this.metrics.published.inc(rows);
    return rows;
  }

  /**
   * Publishes one batch (one topic); the sequences of the rows the bus took, for the caller to mark
   * sent once the call is over (a row the bus refuses for good is dead-lettered here).
   */
  private async publish(batch: OutboxRow[]): Promise<bigint[]> {
    const topic = batch[0]!.topic;
    // Tracing on: one producer span per traced row, child of its write, parent of its handling.
    const spans = batch.map((r) =>
      r.traceparent
        ? startSpan(this.options.serviceName ?? "outbox-relay", `publish ${topic}`, {
            kind: "producer",
            parent: { traceparent: r.traceparent },
            attributes: { "messaging.destination.name": topic, "crm.event.id": r.payload.id },
          })
        : undefined,
    );
    try {
      await this.options.bus.publish(
        topic,
        batch.map((r, i) => {
          const headers = spans[i]?.headers() ?? (r.traceparent ? { traceparent: r.traceparent } : undefined);
          return headers ? { key: r.key, value: r.payload, headers } : { key: r.key, value: r.payload };
        }),
      );
      for (const span of spans) span?.end();
    } catch (err) {
      this.metrics.failures.inc();
      for (const span of spans) {
        span?.fail();
        span?.end();
      }
      if (!(err instanceof MessageRejectedError)) throw err;
      if (batch.length === 1) {
        await this.deadLetter(batch[0]!, err);
        return [];
      }
      // The bus refuses a batch as a whole: send its rows one by one to find the refused ones.
      // Some may already be on the bus (Kafka appends per partition): at least once allows that.
      const sent: bigint[] = [];
      for (const row of batch) sent.push(...(await this.publish([row])));
      return sent;
    }
    this.metrics.batches.inc();
    return batch.map((r) => r.sequence);
  }

  private async deadLetter(row: OutboxRow, err: MessageRejectedError): Promise<void> {
    await this.options.store.deadLetter(row.sequence, err.message.slice(0, MAX_REASON_LENGTH));
    this.counters.deadLettered += 1;
    this.metrics.deadLettered.inc();
    this.options.logger.error(
      {
        err,
        sequence: row.sequence.toString(),
        eventId: row.payload.id,
        eventType: row.payload.type,
        businessId: row.key,
        bytes: encodedSize(row),
        deadLetteredTotal: this.counters.deadLettered,
      },
      "outbox event refused by the bus for good: dead-lettered, the events behind it go on",
    );
  }

  private async run(): Promise<void> {
    let failures = 0;
    while (this.running) {
      this.kicked = false;
      let delay = this.intervalMs;
      try {
        await this.publishPending(true);
        failures = 0;
      } catch (err) {
        this.leaseFreshUntil = 0;
        failures += 1;
        delay = Math.min(this.intervalMs * 2 ** failures, MAX_RETRY_DELAY_MS);
        this.options.logger.warn({ err, failures }, "outbox relay could not publish; will retry");
      }
      if (this.running && !this.kicked) await this.sleep(delay);
    }
  }

  /**
   * Takes or renews the lease, unless this relay took it less than half a term ago: a round per
   * committed write would otherwise cost a lease statement per event (measured in embedded mode:
   * one of eight statements per created record). The term is counted from before the statement was
   * sent, so this side's view expires before the database's does.
   */
  private async holdLease(): Promise<boolean> {
    const clock = this.options.leaseClock ?? performance.now.bind(performance);
    if (clock() < this.leaseFreshUntil) return true;
    const askedAt = clock();
    const held = await this.options.store.acquireLease(this.options.holder, this.leaseMs);
    this.leaseFreshUntil = held ? askedAt + this.leaseMs / 2 : 0;
    return held;
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
