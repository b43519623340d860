import type { AttemptRecord, StartedAttempt } from "../persistence/delivery.repository";
import { AttemptRecorder } from "./attempt-recorder";

const outcome: AttemptRecord = { responseStatus: 200, responseBody: "", durationMs: 1, succeeded: true, status: "SUCCESS", nextRetryAt: null };
const started = (id: string): StartedAttempt => ({
  id,
  webhookId: "w",
  businessId: "b",
  attempt: 0,
  leaseUntil: new Date(0),
  event: "client.created",
  payload: "{}",
  manualRetry: false,
  url: "http://x",
  secret: "s",
  previousSecret: null,
  webhookActive: true,
});

/** A fake recordAttempts whose statements finish only when the test says so. */
function fakeRepository(options: { lost?: Set<string>; failing?: Set<string> } = {}) {
  const statements: string[][] = [];
  const finish: Array<() => void> = [];
  return {
    statements,
    finishNext: async () => {
      finish.shift()!();
      await new Promise((resolve) => setImmediate(resolve));
    },
    recordAttempts: (items: ReadonlyArray<{ started: StartedAttempt }>) => {
      const ids = items.map((item) => item.started.id);
      statements.push(ids);
      return new Promise<Set<string>>((resolve, reject) =>
        finish.push(() => {
          if (ids.some((id) => options.failing?.has(id))) reject(new Error("bad row"));
          else resolve(new Set(ids.filter((id) => !options.lost?.has(id))));
        }),
      );
    },
  };
}

describe("AttemptRecorder", () => {
  it("writes at once while a statement slot is free, and batches what finishes meanwhile", async () => {
    const repo = fakeRepository({ lost: new Set(["d"]) });
    const recorder = new AttemptRecorder({ deliveries: repo, maxConcurrent: 1 });
    const results = ["a", "b", "c", "d"].map((id) => recorder.record(started(id), outcome, new Date()));
    expect(repo.statements).toEqual([["a"]]);
    await repo.finishNext();
    expect(repo.statements).toEqual([["a"], ["b", "c", "d"]]);
    await repo.finishNext();
    // Each caller learns about its own row; "d" lost its lease.
    await expect(Promise.all(results)).resolves.toEqual([true, true, true, false]);
  });

  it("bounds the rows per statement", async () => {
    const repo = fakeRepository();
    const recorder = new AttemptRecorder({ deliveries: repo, maxConcurrent: 1, maxBatch: 2 });
    const results = ["a", "b", "c", "d", "e"].map((id) => recorder.record(started(id), outcome, new Date()));
    for (let i = 0; i < 3; i++) await repo.finishNext();
    expect(repo.statements).toEqual([["a"], ["b", "c"], ["d", "e"]]);
    await expect(Promise.all(results)).resolves.toEqual([true, true, true, true, true]);
  });

  it("retries a failed batch row by row, so only the bad row fails", async () => {
    const repo = fakeRepository({ failing: new Set(["c"]) });
    const recorder = new AttemptRecorder({ deliveries: repo, maxConcurrent: 1 });
    const results = ["a", "b", "c"].map((id) => recorder.record(started(id), outcome, new Date()).then(String, (err: Error) => err.message));
    await repo.finishNext(); // a
    await repo.finishNext(); // b, c together: fails
    await repo.finishNext(); // b alone
    await repo.finishNext(); // c alone: fails
    expect(repo.statements).toEqual([["a"], ["b", "c"], ["b"], ["c"]]);
    await expect(Promise.all(results)).resolves.toEqual(["true", "true", "bad row"]);
  });
});
