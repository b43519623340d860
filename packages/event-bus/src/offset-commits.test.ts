import { waitFor } from "@crm/testing";
import { OffsetCommits, type PartitionOffset } from "./offset-commits";

/** The commits a consumer group was asked for, one list per request. */
function recorder(): { requests: PartitionOffset[][]; commit(offsets: PartitionOffset[]): Promise<void> } {
  const requests: PartitionOffset[][] = [];
  return { requests, commit: async (offsets) => void requests.push(offsets) };
}

const rethrow = (err: unknown) => {
  throw err;
};

describe("OffsetCommits", () => {
  it("commits what is handled an interval after the first offset since the last commit, in one request, and nothing when nothing is left", async () => {
    const broker = recorder();
    const commits = new OffsetCommits(20, broker.commit, rethrow);
    commits.handledUpTo(0, "4");
    commits.handledUpTo(0, "9");
    commits.handledUpTo(1, "2");
    expect(broker.requests).toEqual([]);
    await waitFor(() => broker.requests.length > 0, 5_000, 5);
    expect(broker.requests).toEqual([
      [
        { partition: 0, offset: "9" },
        { partition: 1, offset: "2" },
      ],
    ]);
    await commits.stop();
    expect(broker.requests).toHaveLength(1);
  });

  it("commits at stop() what is left, and never an offset below one already reported for its partition", async () => {
    const broker = recorder();
    const commits = new OffsetCommits(60_000, broker.commit, rethrow);
    commits.handledUpTo(0, "7");
    // The partition fetched again from an older offset (a restarted consumer): everything below 7 is handled already.
    commits.handledUpTo(0, "5");
    await commits.stop();
    expect(broker.requests).toEqual([[{ partition: 0, offset: "7" }]]);
  });

  it("keeps what a failed commit carried for the next one, unless something handled since supersedes it", async () => {
    let fail = true;
    const requests: PartitionOffset[][] = [];
    const failures: unknown[] = [];
    const commits = new OffsetCommits(
      10,
      async (offsets) => {
        if (fail) {
          fail = false;
          throw new Error("coordinator moved");
        }
        requests.push(offsets);
      },
      (err) => failures.push(err),
    );
    commits.handledUpTo(0, "3");
    commits.handledUpTo(1, "8");
    await waitFor(() => failures.length > 0, 5_000, 5);
    commits.handledUpTo(0, "6");
    await waitFor(() => requests.length > 0, 5_000, 5);
    expect(requests).toEqual([
      [
        { partition: 0, offset: "6" },
        { partition: 1, offset: "8" },
      ],
    ]);
    await commits.stop();
  });
});
