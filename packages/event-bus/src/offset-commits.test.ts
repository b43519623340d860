import type { OffsetsByTopicPartition } from "kafkajs";
import { waitFor } from "@crm/testing";
import { OffsetCommits, type BatchCommits } from "./offset-commits";

/** kafkajs's offsets manager as a batch payload sees it: resolved offsets, and what was committed. */
function payload(): BatchCommits & { resolve(offset: string): void; commits: string[] } {
  let resolved: string | undefined;
  let committed: string | undefined;
  const commits: string[] = [];
  const uncommitted = (): OffsetsByTopicPartition => ({
    topics: resolved !== committed && resolved !== undefined ? [{ topic: "t", partitions: [{ partition: 0, offset: resolved }] }] : [],
  });
  return {
    commits,
    resolve: (offset) => void (resolved = offset),
    uncommittedOffsets: uncommitted,
    commitOffsetsIfNecessary: async (offsets) => {
      if (!offsets) return; // the interval, which these tests leave to kafkajs
      committed = offsets.topics[0]!.partitions[0]!.offset;
      commits.push(committed);
    },
  };
}

describe("OffsetCommits", () => {
  it("commits what the last batch left once events stop, in one request, and nothing when nothing is left", async () => {
    const commits = new OffsetCommits(20, (err) => {
      throw err;
    });
    const batch = payload();
    batch.resolve("4");
    await commits.afterBatch(batch, false);
    batch.resolve("9");
    await commits.afterBatch(batch, false);
    expect(batch.commits).toEqual([]);
    await waitFor(() => batch.commits.length > 0, 5_000, 5);
    expect(batch.commits).toEqual(["9"]);
    await commits.afterBatch(batch, false);
    await commits.stop();
    expect(batch.commits).toEqual(["9"]);
  });

  it("commits at once when the consumer is stopping, and at stop()", async () => {
    const commits = new OffsetCommits(60_000, (err) => {
      throw err;
    });
    const batch = payload();
    batch.resolve("3");
    await commits.afterBatch(batch, true);
    expect(batch.commits).toEqual(["3"]);
    batch.resolve("5");
    await commits.afterBatch(batch, false);
    await commits.stop();
    expect(batch.commits).toEqual(["3", "5"]);
  });
});
