import { createConcurrencyLimiter } from "./concurrency";

interface Deferred<T> {
  promise: Promise<T>;
  resolve(value: T): void;
  reject(err: unknown): void;
}

function deferred<T = void>(): Deferred<T> {
  let resolve!: (value: T) => void;
  let reject!: (err: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** Lets every already-queued promise continuation run. */
const settle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** A task that records its start and finishes when the test says so. */
function controlledTask(started: string[], name: string) {
  const gate = deferred<string>();
  return {
    gate,
    task: () => {
      started.push(name);
      return gate.promise;
    },
  };
}

describe("createConcurrencyLimiter", () => {
  it("runs at most maxPerKey tasks of one key at a time, in order", async () => {
    const limiter = createConcurrencyLimiter({ maxInFlight: 10, maxPerKey: 2 });
    const started: string[] = [];
    const tasks = ["a1", "a2", "a3", "a4"].map((name) => controlledTask(started, name));
    const results = tasks.map((t) => limiter.run("A", t.task));

    await settle();
    expect(started).toEqual(["a1", "a2"]);
    expect(limiter.inFlight).toBe(2);
    expect(limiter.queued).toBe(2);

    tasks[1]!.gate.resolve("done a2");
    await settle();
    expect(started).toEqual(["a1", "a2", "a3"]);

    tasks[0]!.gate.resolve("done a1");
    tasks[2]!.gate.resolve("done a3");
    await settle();
    expect(started).toEqual(["a1", "a2", "a3", "a4"]);
    tasks[3]!.gate.resolve("done a4");
    expect(await Promise.all(results)).toEqual(["done a1", "done a2", "done a3", "done a4"]);
    expect(limiter.inFlight).toBe(0);
    expect(limiter.queued).toBe(0);
  });

  it("never lets a saturated key delay other keys", async () => {
    const limiter = createConcurrencyLimiter({ maxInFlight: 10, maxPerKey: 2 });
    const started: string[] = [];
    const slow = ["s1", "s2", "s3", "s4"].map((name) => controlledTask(started, name));
    slow.forEach((t) => void limiter.run("slow", t.task));
    const fast = controlledTask(started, "f1");
    const fastResult = limiter.run("fast", fast.task);

    await settle();
    // f1 was queued after s3 and s4 but starts at once: only "slow" is at its limit.
    expect(started).toEqual(["s1", "s2", "f1"]);
    fast.gate.resolve("fast done");
    expect(await fastResult).toBe("fast done");
    slow.forEach((t) => t.gate.resolve("x"));
  });

  it("respects the overall limit and then starts the oldest eligible task first", async () => {
    const limiter = createConcurrencyLimiter({ maxInFlight: 3, maxPerKey: 2 });
    const started: string[] = [];
    const a1 = controlledTask(started, "a1");
    const a2 = controlledTask(started, "a2");
    const b1 = controlledTask(started, "b1");
    const a3 = controlledTask(started, "a3"); // waits: A at its limit and the overall limit reached
    const c1 = controlledTask(started, "c1"); // waits: overall limit reached
    const b2 = controlledTask(started, "b2"); // waits: overall limit reached
    for (const [key, t] of [
      ["A", a1],
      ["A", a2],
      ["B", b1],
      ["A", a3],
      ["C", c1],
      ["B", b2],
    ] as const)
      void limiter.run(key, t.task);

    await settle();
    expect(started).toEqual(["a1", "a2", "b1"]);
    expect(limiter.inFlight).toBe(3);
    expect(limiter.queued).toBe(3);

    // A slot frees up on B: a3 is older but A is still full, so c1 (the oldest eligible) goes.
    b1.gate.resolve("b1");
    await settle();
    expect(started).toEqual(["a1", "a2", "b1", "c1"]);

    // A slot frees up on A: a3 is now the oldest eligible.
    a1.gate.resolve("a1");
    await settle();
    expect(started).toEqual(["a1", "a2", "b1", "c1", "a3"]);

    c1.gate.resolve("c1");
    await settle();
    expect(started).toEqual(["a1", "a2", "b1", "c1", "a3", "b2"]);
    for (const t of [a2, a3, b2]) t.gate.resolve("x");
    await settle();
    expect(limiter.inFlight).toBe(0);
  });

  it("keeps tasks of one key in submission order even when a slot is free on arrival", async () => {
    const limiter = createConcurrencyLimiter({ maxInFlight: 2, maxPerKey: 1 });
    const started: string[] = [];
    const x1 = controlledTask(started, "x1");
    const y1 = controlledTask(started, "y1");
    const x2 = controlledTask(started, "x2");
    void limiter.run("X", x1.task);
    void limiter.run("Y", y1.task);
    void limiter.run("X", x2.task);
    await settle();
    expect(started).toEqual(["x1", "y1"]);
    x1.gate.resolve("x");
    await settle();
    expect(started).toEqual(["x1", "y1", "x2"]);
    y1.gate.resolve("y");
    x2.gate.resolve("x");
  });

  it("passes rejections through and frees the slot, also for synchronous throws", async () => {
    const limiter = createConcurrencyLimiter({ maxInFlight: 1, maxPerKey: 1 });
    await expect(limiter.run("k", () => Promise.reject(new Error("async boom")))).rejects.toThrow("async boom");
    await expect(
      limiter.run("k", () => {
        throw new Error("sync boom");
      }),
    ).rejects.toThrow("sync boom");
    expect(limiter.inFlight).toBe(0);
    await expect(limiter.run("k", () => Promise.resolve(42))).resolves.toBe(42);
  });

  it.each([
    { keys: 7, expectedPeakOverall: 5, expectedPeakPerKey: 1 }, // FIFO spreads a burst across keys
    { keys: 2, expectedPeakOverall: 4, expectedPeakPerKey: 2 }, // the per-key limit is what binds
  ])("never exceeds either limit under a burst of 200 tasks over $keys keys", async ({ keys, expectedPeakOverall, expectedPeakPerKey }) => {
    const limiter = createConcurrencyLimiter({ maxInFlight: 5, maxPerKey: 2 });
    const running = new Map<string, number>();
    let overall = 0;
    let peakOverall = 0;
    let peakPerKey = 0;
    const runs: Promise<number>[] = [];
    for (let i = 0; i < 200; i += 1) {
      const key = `hook-${i % keys}`;
      runs.push(
        limiter.run(key, async () => {
          overall += 1;
          running.set(key, (running.get(key) ?? 0) + 1);
          peakOverall = Math.max(peakOverall, overall);
          peakPerKey = Math.max(peakPerKey, running.get(key)!);
          await settle();
          overall -= 1;
          running.set(key, running.get(key)! - 1);
          return i;
        }),
      );
    }
    const results = await Promise.all(runs);
    expect(results).toEqual(Array.from({ length: 200 }, (_, i) => i));
    expect(peakOverall).toBe(expectedPeakOverall);
    expect(peakPerKey).toBe(expectedPeakPerKey);
    expect(limiter.inFlight).toBe(0);
    expect(limiter.queued).toBe(0);
  });

  it("uses 50 overall and 2 per key by default and rejects nonsense limits", async () => {
    const limiter = createConcurrencyLimiter();
    const gates = Array.from({ length: 60 }, () => deferred<void>());
    gates.forEach((gate, i) => void limiter.run(`k${i % 30}`, () => gate.promise));
    await settle();
    expect(limiter.inFlight).toBe(50);
    gates.forEach((gate) => gate.resolve());
    await settle();

    const perKey = createConcurrencyLimiter();
    const keyGates = Array.from({ length: 3 }, () => deferred<void>());
    keyGates.forEach((gate) => void perKey.run("same", () => gate.promise));
    await settle();
    expect(perKey.inFlight).toBe(2);
    keyGates.forEach((gate) => gate.resolve());

    expect(() => createConcurrencyLimiter({ maxInFlight: 0 })).toThrow(RangeError);
    expect(() => createConcurrencyLimiter({ maxPerKey: 1.5 })).toThrow(RangeError);
  });
});

describe("createConcurrencyLimiter: fairness between businesses (groups)", () => {
  it("caps one business with many hanging webhooks, so another business starts at once", async () => {
    const limiter = createConcurrencyLimiter({ maxInFlight: 10, maxPerKey: 2, maxPerGroup: 4 });
    const started: string[] = [];
    // Business A: 200 webhooks whose endpoint never answers (their tasks never settle here).
    const hanging = Array.from({ length: 200 }, (_, i) => controlledTask(started, `a${i}`));
    hanging.forEach((t, i) => void limiter.run(`hook-a${i}`, t.task, "A"));
    await settle();
    expect(started).toEqual(["a0", "a1", "a2", "a3"]);
    expect(limiter.queued).toBe(196);

    const b = Array.from({ length: 6 }, (_, i) => controlledTask(started, `b${i}`));
    const bResults = b.map((t, i) => limiter.run(`hook-b${i % 3}`, t.task, "B"));
    await settle();
    // B's first four start at once (its own cap), A keeps its four: six slots of ten are used.
    expect(started.slice(4)).toEqual(["b0", "b1", "b2", "b3"]);
    b.forEach((t, i) => t.gate.resolve(`b${i}`));
    expect(await Promise.all(bResults)).toEqual(["b0", "b1", "b2", "b3", "b4", "b5"]);
    expect(started.filter((name) => name.startsWith("a"))).toHaveLength(4);
    hanging.forEach((t) => t.gate.resolve("x"));
  });

  it("takes businesses in turn when slots free up, however long one business's queue is", async () => {
    const limiter = createConcurrencyLimiter({ maxInFlight: 1, maxPerKey: 1 });
    const order: string[] = [];
    const run = (group: string, name: string) => limiter.run(`${group}-hook-${name}`, async () => void order.push(name), group);
    const all = [...["a1", "a2", "a3", "a4", "a5"].map((name) => run("A", name)), ...["b1", "b2"].map((name) => run("B", name)), run("C", "c1")];
    await Promise.all(all);
    expect(order).toEqual(["a1", "b1", "c1", "a2", "b2", "a3", "a4", "a5"]);
  });

  it("never exceeds the per-business cap under a burst, and loses no task", async () => {
    const limiter = createConcurrencyLimiter({ maxInFlight: 6, maxPerKey: 2, maxPerGroup: 3 });
    const runningPerGroup = new Map<string, number>();
    let peakPerGroup = 0;
    let peakOverall = 0;
    let overall = 0;
    const runs = Array.from({ length: 300 }, (_, i) => {
      const group = `business-${i % 2}`;
      return limiter.run(
        `hook-${i % 17}`,
        async () => {
          overall += 1;
          runningPerGroup.set(group, (runningPerGroup.get(group) ?? 0) + 1);
          peakOverall = Math.max(peakOverall, overall);
          peakPerGroup = Math.max(peakPerGroup, runningPerGroup.get(group)!);
          await settle();
          overall -= 1;
          runningPerGroup.set(group, runningPerGroup.get(group)! - 1);
          return i;
        },
        group,
      );
    });
    expect(await Promise.all(runs)).toEqual(Array.from({ length: 300 }, (_, i) => i));
    expect(peakPerGroup).toBe(3);
    expect(peakOverall).toBe(6);
    expect(limiter.inFlight).toBe(0);
    expect(limiter.queued).toBe(0);
    expect(() => createConcurrencyLimiter({ maxPerGroup: 0 })).toThrow(RangeError);
  });
});
