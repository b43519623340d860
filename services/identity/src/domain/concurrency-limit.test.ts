import { ConcurrencyLimit, QueueFull } from "./concurrency-limit";

/** A task that ends when told to. */
function task() {
  let finish!: () => void;
  const done = new Promise<void>((resolve) => (finish = resolve));
  return { run: () => done, finish };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

describe("ConcurrencyLimit", () => {
  it("runs at most `concurrency` tasks at once, queues up to `queueLimit`, and refuses the next at once", async () => {
    const limit = new ConcurrencyLimit(2, 1);
    const tasks = [task(), task(), task()];
    const started: number[] = [];
    const runs = tasks.map((t, i) =>
      limit.run(async () => {
        started.push(i);
        await t.run();
        return i;
      }),
    );
    await settle();
    expect([started, limit.load]).toEqual([[0, 1], { running: 2, waiting: 1 }]);
    await expect(limit.run(async () => "never")).rejects.toBeInstanceOf(QueueFull);
    tasks[0]!.finish();
    await settle();
    expect([started, limit.load]).toEqual([[0, 1, 2], { running: 2, waiting: 0 }]);
    tasks[1]!.finish();
    tasks[2]!.finish();
    expect(await Promise.all(runs)).toEqual([0, 1, 2]);
    expect(limit.load).toEqual({ running: 0, waiting: 0 });
  });

  it("frees a slot when a task fails, and passes it to the next waiter before any newcomer", async () => {
    const limit = new ConcurrencyLimit(1, 2);
    const first = task();
    const failing = limit.run(async () => {
      await first.run();
      throw new Error("boom");
    });
    const order: string[] = [];
    const queued = limit.run(async () => void order.push("queued"));
    first.finish();
    await expect(failing).rejects.toThrow("boom");
    const newcomer = limit.run(async () => void order.push("newcomer"));
    await Promise.all([queued, newcomer]);
    expect(order).toEqual(["queued", "newcomer"]);
    expect(limit.load).toEqual({ running: 0, waiting: 0 });
  });

  it("estimates when to try again from the tasks' durations", async () => {
    let clock = 0;
    const limit = new ConcurrencyLimit(2, 2, () => clock);
    await limit.run(async () => void (clock += 400));
    const held = [task(), task(), task(), task()];
    const runs = held.map((t) => limit.run(t.run));
    await settle();
    const refused = await limit.run(async () => undefined).catch((err: unknown) => err);
    // Two waiting, two slots: the third in line starts after one and a half task lengths.
    expect(refused).toBeInstanceOf(QueueFull);
    expect((refused as QueueFull).retryAfterMs).toBe(600);
    for (const t of held) t.finish();
    await Promise.all(runs);
  });
});
