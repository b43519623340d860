import type { BatchEventHandler, BusEvent } from "./event-bus";

/** Consecutive messages of one partition, taken for handling. Offsets are Kafka's, as decimal text. */
export interface FetchedRun {
  partition: number;
  firstOffset: string;
  lastOffset: string;
  /** The run's events (a message that is not an event is left out, but its offset is in the run). */
  events: BusEvent[];
}

export interface HandlingQueueOptions {
  handler: BatchEventHandler;
  /** Events handed to one handler call at most. */
  maxTogether: number;
  /** Events taken and not yet handled beyond which `room()` waits. */
  maxWaiting: number;
  /** A handler call succeeded: per partition it covered, the offset after the last one handled. */
  onHandled(partition: number, nextOffset: string): void;
  /**
   * A handler call failed. Its runs and every run taken after them were dropped: `firstUnhandled` has,
   * per partition, the offset to fetch again from.
   */
  onFailed(firstUnhandled: ReadonlyMap<number, string>, err: unknown): void;
}

/**
 * Hands a consumer's fetched runs to its batch handler one call at a time, in the order taken, while
 * the consumer fetches on. A fetch does not wait for the handler of the one before: what arrives
 * during a handler call goes, all of it, into the next call. So a partition's events are no longer
 * handled one fetch after another, each a fetch round trip plus a statement (the mock broker returns
 * one producer request per partition per fetch: at 100 events/s one event per fetch).
 * Nothing is handled twice by one queue, nothing out of order, and a failure drops everything taken
 * after the failed run, to be fetched again: the caller commits only what `onHandled` reports.
 */
export class HandlingQueue {
  private waiting: FetchedRun[] = [];
  /** Events (a run without any counts one) waiting or in the handler call under way. */
  private taken = 0;
  private draining: Promise<void> | undefined;
  private roomWaiters: Array<() => void> = [];

  constructor(private readonly options: HandlingQueueOptions) {}

  /** Takes a run for handling; the handler gets it after every run taken before it. */
  take(run: FetchedRun): void {
    this.waiting.push(run);
    this.taken += weight(run);
    this.draining ??= this.drain();
  }

  /** Resolves once at most `maxWaiting` events are taken and not yet handled (back-pressure on fetching). */
  async room(): Promise<void> {
    while (this.taken > this.options.maxWaiting) await new Promise<void>((resolve) => this.roomWaiters.push(resolve));
  }

  /** Resolves once every run taken so far is handled or dropped. */
  async idle(): Promise<void> {
    while (this.draining) await this.draining;
  }

  private async drain(): Promise<void> {
    // Not one step in take()'s own call: `draining` is set before this can end and clear it.
    await null;
    try {
      while (this.waiting.length > 0) {
        const runs: FetchedRun[] = [];
        let count = 0;
        while (this.waiting.length > 0 && (runs.length === 0 || count + this.waiting[0]!.events.length <= this.options.maxTogether)) {
          const run = this.waiting.shift()!;
          runs.push(run);
          count += run.events.length;
        }
        const events = runs.length === 1 ? runs[0]!.events : runs.flatMap((run) => run.events);
        try {
          if (events.length > 0) await this.options.handler(events);
        } catch (err) {
          const firstUnhandled = new Map<number, string>();
          for (const run of [...runs, ...this.waiting]) if (!firstUnhandled.has(run.partition)) firstUnhandled.set(run.partition, run.firstOffset);
          this.waiting = [];
          this.taken = 0;
          this.wakeRoomWaiters();
          this.options.onFailed(firstUnhandled, err);
          continue;
        }
        const next = new Map<number, string>();
        for (const run of runs) next.set(run.partition, (BigInt(run.lastOffset) + 1n).toString());
        for (const run of runs) this.taken -= weight(run);
        this.wakeRoomWaiters();
        for (const [partition, offset] of next) this.options.onHandled(partition, offset);
      }
    } finally {
      this.draining = undefined;
    }
  }

  private wakeRoomWaiters(): void {
    const waiters = this.roomWaiters;
    this.roomWaiters = [];
    for (const wake of waiters) wake();
  }
}

function weight(run: FetchedRun): number {
  return Math.max(1, run.events.length);
}
