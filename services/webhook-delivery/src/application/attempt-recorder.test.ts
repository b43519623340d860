import { DependencyUnavailableError } from "@crm/errors";
import type { AttemptRecord, StartedAttempt } from "../persistence/delivery.repository";
import { AttemptRecorder } from "./attempt-recorder";

const outcome: AttemptRecord = { responseStatus: 200, responseBody: "", durationMs: 1, succeeded: true, status: "SUCCESS", nextRetryAt: null };
const started = (id: string, leaseUntil = new Date(0)): StartedAttempt => ({
  id,
  webhookId: "w",
  businessId: "b",
  attempt: 0,
  leaseUntil,
  event: "client.created",
  payload: "{}",
  manualRetry: false,
  url: "http://x",
  secret: "s",
  previousSecret: null,
  webhookActive: true,
});

/** A fake recordAttempts whose statements finish only when the test says so. */
function fakeRepository(options: { lost?: Set<string>; failing?: Set<string>; unreachable?: () => boolean } = {}) {
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
          if (options.unreachable?.()) reject(new DependencyUnavailableError("database", "connection lost"));
          else if (ids.some((id) => options.failing?.has(id))) reject(new Error("bad row"));
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

  describe("with a linger", () => {
    // setImmediate stays real: the fake repository settles a statement through it.
    beforeEach(() => jest.useFakeTimers({ doNotFake: ["setImmediate"] }));
    afterEach(() => jest.useRealTimers());

    it("holds outcomes until the oldest has waited lingerMs, then writes them in one statement", async () => {
      const repo = fakeRepository();
      const recorder = new AttemptRecorder({ deliveries: repo, maxConcurrent: 1, lingerMs: 10 });
      const first = recorder.record(started("a"), outcome, new Date());
      jest.advanceTimersByTime(6);
      const second = recorder.record(started("b"), outcome, new Date());
      jest.advanceTimersByTime(3);
      expect(repo.statements).toEqual([]);
      jest.advanceTimersByTime(1);
      expect(repo.statements).toEqual([["a", "b"]]);
      await repo.finishNext();
      await expect(Promise.all([first, second])).resolves.toEqual([true, true]);
    });

    it("writes a full batch at once", () => {
      const repo = fakeRepository();
      const recorder = new AttemptRecorder({ deliveries: repo, maxConcurrent: 1, maxBatch: 2, lingerMs: 10 });
      void recorder.record(started("a"), outcome, new Date());
      void recorder.record(started("b"), outcome, new Date());
      expect(repo.statements).toEqual([["a", "b"]]);
    });

    it("after a statement, writes what waited long enough at once and lets the rest wait out its linger", async () => {
      const repo = fakeRepository();
      const recorder = new AttemptRecorder({ deliveries: repo, maxConcurrent: 1, lingerMs: 10 });
      void recorder.record(started("a"), outcome, new Date());
      jest.advanceTimersByTime(10);
      void recorder.record(started("b"), outcome, new Date());
      jest.advanceTimersByTime(10); // "b" has lingered, but the one statement slot is taken
      expect(repo.statements).toEqual([["a"]]);
      await repo.finishNext();
      expect(repo.statements).toEqual([["a"], ["b"]]);
      void recorder.record(started("c"), outcome, new Date());
      await repo.finishNext();
      expect(repo.statements).toEqual([["a"], ["b"]]);
      jest.advanceTimersByTime(10);
      expect(repo.statements).toEqual([["a"], ["b"], ["c"]]);
    });
  });

  describe("when the database is unreachable", () => {
    beforeEach(() => jest.useFakeTimers({ doNotFake: ["setImmediate"], now: 0 }));
    afterEach(() => jest.useRealTimers());

    it("writes the outcome again, with a growing delay, until the database answers", async () => {
      let down = true;
      const repo = fakeRepository({ unreachable: () => down });
      const recorder = new AttemptRecorder({ deliveries: repo, retryDelayMs: 100, now: () => Date.now() });
      const result = recorder.record(started("a", new Date(10_000)), outcome, new Date());
      await repo.finishNext(); // fails: due again in 100 ms
      jest.advanceTimersByTime(99);
      expect(repo.statements).toEqual([["a"]]);
      jest.advanceTimersByTime(1);
      await repo.finishNext(); // fails again: due in 200 ms
      jest.advanceTimersByTime(199);
      expect(repo.statements).toHaveLength(2);
      down = false;
      jest.advanceTimersByTime(1);
      await repo.finishNext();
      expect(repo.statements).toEqual([["a"], ["a"], ["a"]]);
      await expect(result).resolves.toBe(true);
    });

    it("gives up when the next write would come after the lease ends, and fails a bad row at once", async () => {
      const repo = fakeRepository({ unreachable: () => true });
      const recorder = new AttemptRecorder({ deliveries: repo, retryDelayMs: 100, now: () => Date.now() });
      const result = recorder.record(started("a", new Date(150)), outcome, new Date()).catch((err: Error) => err.name);
      await repo.finishNext(); // fails at 0: due at 100, inside the lease
      jest.advanceTimersByTime(100);
      await repo.finishNext(); // fails at 100: the next (at 300) would be after the lease
      await expect(result).resolves.toBe("DependencyUnavailableError");
      expect(repo.statements).toHaveLength(2);

      const badRow = fakeRepository({ failing: new Set(["b"]) });
      const other = new AttemptRecorder({ deliveries: badRow, retryDelayMs: 100, now: () => Date.now() });
      const failed = other.record(started("b", new Date(10_000)), outcome, new Date()).catch((err: Error) => err.message);
      await badRow.finishNext();
      await expect(failed).resolves.toBe("bad row");
      expect(badRow.statements).toHaveLength(1);
    });
  });
});
