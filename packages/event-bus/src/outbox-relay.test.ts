// OutboxRelay against stores kept in memory: order, leases, dead letters, batches by bytes, marks
// and reads in one call, and the linger under a stream of writes.
import { InProcessBus } from "./in-process-bus";
import { OutboxRelay, type OutboxRow } from "./outbox-relay";
import { DEFAULT_MAX_BATCH_BYTES, encodedSize, publishBatches } from "./publish-batches";
import { waitFor } from "@crm/testing";
import { envelopeOf, event, logger, MemoryOutbox, MergingMemoryOutbox, RecordingBus, STORES, wireBytes } from "./bus-test-fixtures";
describe.each(STORES)("OutboxRelay, a store that %s", (_kind, Store) => {
  it("publishes pending rows in order and keeps them until the bus accepts them", async () => {
    const bus = new InProcessBus();
    const store = new Store();
    let healthy = false;
    const seen: number[] = [];
    await bus.subscribe({
      topic: "t",
      groupId: "g",
      handler: async (e) => {
        if (!healthy) throw new Error("consumer down");
        seen.push(e.data.n as number);
      },
    });
    for (let n = 1; n <= 5; n++) store.add("t", event("b", n));
    const relay = new OutboxRelay({ store, bus, logger, holder: "r1", intervalMs: 20 });
    relay.start();
    await new Promise((r) => setTimeout(r, 60));
    expect(store.rows.every((r) => !r.sent)).toBe(true);
    healthy = true;
    await waitFor(() => store.rows.every((r) => r.sent), 5000);
    store.add("t", event("b", 6));
    relay.kick();
    await waitFor(() => seen.length === 6, 5000);
    await relay.stop();
    // At least once: every event arrives, in order, the last occurrence of each in sequence.
    expect([...new Set(seen)]).toEqual([1, 2, 3, 4, 5, 6]);
  });

  it("lets only the lease holder publish", async () => {
    const bus = new InProcessBus();
    const store = new Store();
    store.leaseHolder = "other";
    await bus.subscribe({ topic: "t", groupId: "g", handler: async () => undefined });
    store.add("t", event("b", 1));
    const relay = new OutboxRelay({ store, bus, logger, holder: "me", intervalMs: 10 });
    relay.start();
    await new Promise((r) => setTimeout(r, 50));
    expect(store.rows[0]!.sent).toBe(false);
    store.leaseHolder = undefined;
    await waitFor(() => store.rows[0]!.sent, 2000);
    await relay.stop();
  });
});

describe("OutboxRelay's lease", () => {
  it("is taken once per half term, not once per round, and renewed after that", async () => {
    const bus = new InProcessBus();
    const store = new MemoryOutbox();
    await bus.subscribe({ topic: "t", groupId: "g", handler: async () => undefined });
    let now = 0;
    const relay = new OutboxRelay({ store, bus, logger, holder: "me", intervalMs: 10_000, leaseMs: 6000, leaseClock: () => now });
    relay.start();
    for (let n = 1; n <= 5; n++) {
      store.add("t", event("b", n));
      relay.kick();
      await waitFor(() => store.rows.every((r) => r.sent), 2000);
    }
    expect(store.leaseCalls).toBe(1);
    now += 3_100; // past half the term
    store.add("t", event("b", 6));
    relay.kick();
    await waitFor(() => store.rows.every((r) => r.sent), 2000);
    expect(store.leaseCalls).toBe(2);
    await relay.stop();
  });

  it("is asked for again on every round while another relay holds it", async () => {
    const bus = new InProcessBus();
    const store = new MemoryOutbox();
    store.leaseHolder = "other";
    await bus.subscribe({ topic: "t", groupId: "g", handler: async () => undefined });
    const relay = new OutboxRelay({ store, bus, logger, holder: "me", intervalMs: 10, leaseMs: 60_000 });
    relay.start();
    await waitFor(() => store.leaseCalls >= 3, 2000);
    store.add("t", event("b", 1));
    store.leaseHolder = undefined;
    await waitFor(() => store.rows[0]!.sent, 2000);
    await relay.stop();
  });
});

describe.each(STORES)("OutboxRelay with a row the bus refuses for good, a store that %s", (_kind, Store) => {
  it("dead-letters it exactly once and publishes every row behind it, of its own business and of others", async () => {
    const bus = new RecordingBus();
    const store = new Store();
    store.add("t", event("a", 1));
    const bad = store.add("t", event("a", 2));
    store.add("t", event("b", 3));
    store.add("t", event("a", 4));
    store.add("t", event("b", 5));
    bus.condemned.add(bad.id);
    const relay = new OutboxRelay({ store, bus, logger, holder: "r", intervalMs: 10 });
    relay.start();
    await waitFor(() => store.rows.every((r) => r.sent || r.deadLetter !== undefined), 5000);
    store.add("t", event("a", 6)); // and the relay keeps going afterwards
    relay.kick();
    await waitFor(() => store.rows.every((r) => r.sent || r.deadLetter !== undefined), 5000);
    await new Promise((r) => setTimeout(r, 50)); // a few more idle rounds: nothing is retried
    await relay.stop();
    expect(bus.published()).toEqual([1, 3, 4, 5, 6]);
    expect(store.deadLetterCalls).toEqual([2n]);
    expect(store.rows[1]!.deadLetter).toMatch(/MESSAGE_TOO_LARGE/);
    expect(store.rows[1]!.sent).toBe(false);
    expect(relay.stats()).toEqual({ published: 5, deadLettered: 1 });
  });

  it("never dead-letters on a transient failure: the rows wait, in order, and leave once the bus is back", async () => {
    const bus = new RecordingBus();
    const store = new Store();
    bus.transientFailure = Object.assign(new Error("broker down"), { retriable: false }); // e.g. retries exhausted
    for (let n = 1; n <= 3; n++) store.add("t", event("a", n));
    const relay = new OutboxRelay({ store, bus, logger, holder: "r", intervalMs: 10 });
    relay.start();
    await new Promise((r) => setTimeout(r, 100));
    expect(store.rows.some((r) => r.sent)).toBe(false);
    bus.transientFailure = undefined;
    relay.kick();
    await waitFor(() => store.rows.every((r) => r.sent), 5000);
    await relay.stop();
    expect(store.deadLetterCalls).toEqual([]);
    expect(bus.published()).toEqual([1, 2, 3]);
  });
});

describe.each(STORES)("OutboxRelay batches bounded by encoded bytes, a store that %s", (_kind, Store) => {
  it("never sends more than the budget in one request, a larger row alone, every row once and in order", async () => {
    const bus = new RecordingBus();
    const store = new Store();
    const sizes = [10_000, 30_000, 5_000, 90_000, 150_000, 20_000, 20_000, 20_000, 60_000, 1_000];
    sizes.forEach((padding, i) => store.add("t", event(i % 2 ? "a" : "b", i + 1, padding)));
    const relay = new OutboxRelay({ store, bus, logger, holder: "r", maxBatchBytes: 100_000 });
    await relay.drain();
    expect(bus.published()).toEqual(sizes.map((_, i) => i + 1));
    for (const call of bus.calls) {
      if (call.length > 1) expect(wireBytes(call)).toBeLessThanOrEqual(100_000);
    }
    const alone = bus.calls.find((call) => call.some((m) => envelopeOf(m.value).data.n === 5));
    expect(alone).toHaveLength(1); // 150 kB: over the budget, so it goes by itself
    expect(bus.calls.length).toBeGreaterThan(3);
  });

  it("keeps each request under the default budget, well under Kafka's 1 MiB message limit", async () => {
    const bus = new RecordingBus();
    const store = new Store();
    for (let n = 1; n <= 100; n++) store.add("t", event("a", n, 20_000)); // 2 MB in all, one business
    await new OutboxRelay({ store, bus, logger, holder: "r" }).drain();
    expect(bus.published()).toEqual(Array.from({ length: 100 }, (_, i) => i + 1));
    expect(DEFAULT_MAX_BATCH_BYTES).toBeLessThanOrEqual(512 * 1024);
    for (const call of bus.calls) expect(wireBytes(call)).toBeLessThanOrEqual(DEFAULT_MAX_BATCH_BYTES);
  });

  it("cuts rows into consecutive runs of one topic", () => {
    const rows: OutboxRow[] = ["t", "t", "u", "t"].map((topic, i) => {
      const e = event("a", i + 1);
      return { sequence: BigInt(i + 1), topic, key: "a", payload: e };
    });
    const batches = publishBatches(rows, 1_000_000);
    expect(batches.map((b) => b.map((r) => Number(r.sequence)))).toEqual([[1, 2], [3], [4]]);
    expect(publishBatches(rows, 1).map((b) => b.length)).toEqual([1, 1, 1, 1]);
    expect(encodedSize(rows[0]!)).toBeGreaterThan(Buffer.byteLength(JSON.stringify(rows[0]!.payload)));
  });
});

describe("OutboxRelay with a store that marks and reads in one call", () => {
  it("publishes rows committed during each publish in the same round, one store call per publish, every row once and in order", async () => {
    const bus = new RecordingBus();
    const store = new MergingMemoryOutbox();
    store.add("t", event("a", 1));
    let n = 1;
    // A write commits while each of the first five publishes is on its way.
    bus.duringPublish = () => {
      if (n < 6) store.add("t", event(n % 2 ? "b" : "a", ++n));
    };
    const relay = new OutboxRelay({ store, bus, logger, holder: "r" });
    expect(await relay.drain()).toBe(6);
    expect(bus.published()).toEqual([1, 2, 3, 4, 5, 6]);
    expect(store.rows.every((r) => r.sent)).toBe(true);
    expect(store.calls).toEqual({ pending: 1, markSent: 0, markSentAndPending: 6 });
    expect(relay.stats()).toEqual({ published: 6, deadLettered: 0 });
  });
});

describe("OutboxRelay's linger under a stream of writes", () => {
  /** Commits one event every `everyMs` (kicking the relay) until `count` are in; resolves then. */
  async function stream(store: MemoryOutbox, relay: OutboxRelay, first: number, count: number, everyMs: number): Promise<void> {
    for (let n = first; n < first + count; n++) {
      store.add("t", event("a", n));
      relay.kick();
      await new Promise((resolve) => setTimeout(resolve, everyMs));
    }
  }

  it("lets the rows of a stream gather into fewer, larger publishes, every row once and in order", async () => {
    const bus = new RecordingBus();
    const store = new MergingMemoryOutbox();
    const relay = new OutboxRelay({ store, bus, logger, holder: "r", intervalMs: 10_000, lingerMs: 60, lingerRows: 2 });
    // A first burst, so a read finds enough rows to linger after.
    for (let n = 1; n <= 4; n++) store.add("t", event("a", n));
    relay.start();
    relay.kick();
    await stream(store, relay, 5, 40, 2);
    await waitFor(async () => bus.published().length === 44, 5000);
    await relay.stop();
    expect(bus.published()).toEqual(Array.from({ length: 44 }, (_, i) => i + 1));
    // Without lingering, a publish about every 2 ms would take one or two rows.
    expect(bus.calls.length).toBeLessThanOrEqual(12);
  });

  it("publishes an event that comes alone at once, and one after the stream stops within a few ms", async () => {
    const bus = new RecordingBus();
    const store = new MergingMemoryOutbox();
    const relay = new OutboxRelay({ store, bus, logger, holder: "r", intervalMs: 10_000, lingerMs: 1000, lingerRows: 2 });
    relay.start();
    store.add("t", event("a", 1));
    let asked = performance.now();
    relay.kick();
    await waitFor(async () => bus.published().length === 1, 2000);
    expect(performance.now() - asked).toBeLessThan(200);
    // A read of several rows, then the writes stop: the linger ends on the quiet, far before 1 s.
    for (let n = 2; n <= 5; n++) store.add("t", event("a", n));
    relay.kick();
    await waitFor(async () => bus.published().length === 5, 2000);
    store.add("t", event("a", 6));
    asked = performance.now();
    relay.kick();
    await waitFor(async () => bus.published().length === 6, 2000);
    expect(performance.now() - asked).toBeLessThan(200);
    await relay.stop();
    expect(bus.published()).toEqual([1, 2, 3, 4, 5, 6]);
  });
});
