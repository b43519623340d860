/** A partition's offset to commit: the one after the last handled message. */
export interface PartitionOffset {
  partition: number;
  offset: string;
}

/**
 * When a batch consumer commits the offsets it has handled, instead of kafkajs's `autoCommit`, which
 * commits after every fetched batch whatever its interval: one OffsetCommit round trip per fetch, and
 * at low rates a fetch holds one event (one relay publish), so a commit per event. Here the first
 * offset handled after a commit is committed `intervalMs` later, with everything handled by then: at
 * most one commit per `intervalMs` while events flow, and one `intervalMs` after the last; when the
 * consumer stops, at once. Only offsets reported handled are committed (the consumer fetches ahead of
 * its handler, so kafkajs's resolved offsets are not that), so nothing is lost: what a crash or a
 * rebalance leaves uncommitted (at most `intervalMs` of events) is handled again by whoever gets the
 * partition, which the handlers must bear anyway (at-least-once).
 */
export class OffsetCommits {
  /** Per partition, the offset after the last handled message, not committed yet. */
  private readonly handled = new Map<number, bigint>();
  /** Per partition, the highest offset ever reported handled, committed or not. */
  private readonly highest = new Map<number, bigint>();
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(
    private readonly intervalMs: number,
    private readonly commit: (offsets: PartitionOffset[]) => Promise<void>,
    private readonly onLaterCommitFailure: (err: unknown) => void,
  ) {}

  /**
   * Every message of `partition` before `nextOffset` is handled. An offset below one already reported
   * (the partition fetched again after a restart) changes nothing: everything below the higher one
   * was handled too.
   */
  handledUpTo(partition: number, nextOffset: string): void {
    const offset = BigInt(nextOffset);
    const known = this.highest.get(partition);
    if (known !== undefined && offset <= known) return;
    this.highest.set(partition, offset);
    this.handled.set(partition, offset);
    if (this.timer || this.stopped) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      if (!this.stopped) this.flush().catch(this.onLaterCommitFailure);
    }, this.intervalMs);
  }

  /** Stops the later commit, and commits what is handled and not committed (before the consumer leaves its group). */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await this.flush();
  }

  private async flush(): Promise<void> {
    if (this.handled.size === 0) return;
    const offsets = [...this.handled].map(([partition, offset]) => ({ partition, offset: offset.toString() }));
    this.handled.clear();
    try {
      await this.commit(offsets);
    } catch (err) {
      // Still owed, unless something handled since supersedes it; the next commit covers them.
      for (const { partition, offset } of offsets) if (!this.handled.has(partition)) this.handled.set(partition, BigInt(offset));
      throw err;
    }
  }
}
