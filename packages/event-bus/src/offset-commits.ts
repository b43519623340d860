import type { EachBatchPayload } from "kafkajs";

/** What OffsetCommits uses of the kafkajs payload of the batch being handled. */
export type BatchCommits = Pick<EachBatchPayload, "commitOffsetsIfNecessary" | "uncommittedOffsets">;

/**
 * When a batch consumer commits the offsets it has handled (resolved), instead of kafkajs's
 * `autoCommit`, which commits after every fetched batch whatever its interval: one OffsetCommit round
 * trip per fetch, and at low rates a fetch holds one event (one relay publish), so a commit per event.
 * Here, while events keep coming, at most once per `intervalMs` (kafkajs's `autoCommitInterval`,
 * checked by `commitOffsetsIfNecessary()` after each handled slice); when they stop, `intervalMs`
 * after the last batch; when the consumer stops, at once. Offsets are still only committed once
 * handled, so nothing is lost: what a crash or a rebalance leaves uncommitted (at most `intervalMs`
 * of events) is handled again by whoever gets the partition, which the handlers must bear anyway
 * (at-least-once).
 */
export class OffsetCommits {
  private timer: NodeJS.Timeout | undefined;
  /** The payload of the last batch handled: its offsets manager holds the uncommitted offsets. */
  private last: BatchCommits | undefined;
  private stopped = false;

  constructor(
    private readonly intervalMs: number,
    private readonly onLaterCommitFailure: (err: unknown) => void,
  ) {}

  /**
   * At the end of handling a batch (however it ended): commits now if stopping, otherwise makes sure
   * what is left uncommitted is committed `intervalMs` from now if no batch does it first.
   */
  async afterBatch(payload: BatchCommits, stopping: boolean): Promise<void> {
    this.last = payload;
    if (stopping || this.stopped) {
      await commitUncommitted(payload);
      return;
    }
    if (this.timer || !hasUncommitted(payload)) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      if (this.stopped || this.last === undefined) return;
      commitUncommitted(this.last).catch(this.onLaterCommitFailure);
    }, this.intervalMs);
  }

  /** Stops the later commit, and commits what the last batch left (before the consumer leaves its group). */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    if (this.last) await commitUncommitted(this.last);
  }
}

function hasUncommitted(payload: BatchCommits): boolean {
  return payload.uncommittedOffsets().topics.length > 0;
}

/** With offsets given, kafkajs commits them whatever the interval. */
async function commitUncommitted(payload: BatchCommits): Promise<void> {
  const offsets = payload.uncommittedOffsets();
  if (offsets.topics.length > 0) await payload.commitOffsetsIfNecessary(offsets);
}
