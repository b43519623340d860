import type { BusEvent } from "./event-bus";
import { HandlingQueue, type FetchedRun } from "./handling-queue";

/** A run of one partition carrying events numbered by their offsets. */
function run(partition: number, first: number, last: number): FetchedRun {
  const events: BusEvent[] = [];
  for (let offset = first; offset <= last; offset++) {
    events.push({ event: { id: `${partition}-${offset}`, type: "client.created", businessId: "b", occurredAt: "", version: 1, data: { offset } }, context: { headers: {} } });
  }
  return { partition, firstOffset: String(first), lastOffset: String(last), events };
}

/** A handler whose calls each wait until released, or fail. */
function gatedHandler() {
  const calls: string[][] = [];
  const gates: Array<{ release(): void; fail(err: Error): void }> = [];
  return {
    calls,
    handler: (events: readonly BusEvent[]) =>
      new Promise<void>((resolve, reject) => {
        calls.push(events.map((e) => e.event.id));
        gates.push({ release: resolve, fail: reject });
      }),
    /** Settles the oldest unsettled call, once it has been made. */
    async next(outcome: "release" | Error) {
      while (gates.length === 0) await new Promise((resolve) => setImmediate(resolve));
      const gate = gates.shift()!;
      if (outcome === "release") gate.release();
      else gate.fail(outcome);
      await new Promise((resolve) => setImmediate(resolve));
    },
  };
}

describe("HandlingQueue", () => {
  it("hands what is taken during a handler call to the next call, all together and in order, and reports each partition handled", async () => {
    const h = gatedHandler();
    const handled: Array<[number, string]> = [];
    const queue = new HandlingQueue({ handler: h.handler, maxTogether: 100, maxWaiting: 100, onHandled: (p, o) => handled.push([p, o]), onFailed: () => {} });
    queue.take(run(0, 0, 0));
    await new Promise((resolve) => setImmediate(resolve));
    queue.take(run(0, 1, 1));
    queue.take(run(1, 5, 6));
    queue.take(run(0, 2, 3));
    expect(h.calls).toEqual([["0-0"]]);
    await h.next("release");
    expect(handled).toEqual([[0, "1"]]);
    expect(h.calls[1]).toEqual(["0-1", "1-5", "1-6", "0-2", "0-3"]);
    await h.next("release");
    await queue.idle();
    expect(handled).toEqual([
      [0, "1"],
      [0, "4"],
      [1, "7"],
    ]);
  });

  it("hands at most maxTogether events to one call, and holds room() while more than maxWaiting are taken", async () => {
    const h = gatedHandler();
    const queue = new HandlingQueue({ handler: h.handler, maxTogether: 3, maxWaiting: 4, onHandled: () => {}, onFailed: () => {} });
    queue.take(run(0, 0, 1));
    queue.take(run(0, 2, 3));
    queue.take(run(0, 4, 4));
    let roomy = false;
    const room = queue.room().then(() => (roomy = true));
    await new Promise((resolve) => setImmediate(resolve));
    expect(h.calls).toEqual([["0-0", "0-1"]]);
    expect(roomy).toBe(false);
    await h.next("release");
    await room;
    expect(roomy).toBe(true);
    expect(h.calls[1]).toEqual(["0-2", "0-3", "0-4"]);
    await h.next("release");
    await queue.idle();
  });

  it("on a failure drops the failed runs and every run taken after them, reports where each partition must be fetched again from, and reports nothing handled", async () => {
    const h = gatedHandler();
    const handled: Array<[number, string]> = [];
    const failures: Array<[Map<number, string>, unknown]> = [];
    const queue = new HandlingQueue({
      handler: h.handler,
      maxTogether: 100,
      maxWaiting: 100,
      onHandled: (p, o) => handled.push([p, o]),
      onFailed: (first, err) => failures.push([new Map(first), err]),
    });
    queue.take(run(0, 10, 11));
    await new Promise((resolve) => setImmediate(resolve));
    queue.take(run(1, 3, 3));
    queue.take(run(0, 12, 12));
    const err = new Error("database down");
    await h.next(err);
    await queue.idle();
    expect(h.calls).toEqual([["0-10", "0-11"]]);
    expect(handled).toEqual([]);
    expect(failures).toEqual([
      [
        new Map([
          [0, "10"],
          [1, "3"],
        ]),
        err,
      ],
    ]);
    // Taken again (fetched again), handled as new.
    queue.take(run(0, 10, 12));
    await h.next("release");
    await queue.idle();
    expect(handled).toEqual([[0, "13"]]);
  });

  it("reports a run without events handled in its turn, without calling the handler for it alone", async () => {
    const h = gatedHandler();
    const handled: Array<[number, string]> = [];
    const queue = new HandlingQueue({ handler: h.handler, maxTogether: 100, maxWaiting: 100, onHandled: (p, o) => handled.push([p, o]), onFailed: () => {} });
    queue.take({ partition: 2, firstOffset: "7", lastOffset: "7", events: [] });
    await queue.idle();
    expect(h.calls).toEqual([]);
    expect(handled).toEqual([[2, "8"]]);
  });
});
