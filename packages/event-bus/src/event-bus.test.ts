import { randomUUID } from "node:crypto";
import { Writable } from "node:stream";
import { Kafka, KafkaJSConnectionError, KafkaJSNonRetriableError, KafkaJSNumberOfRetriesExceeded, KafkaJSProtocolError, logLevel } from "kafkajs";
import { createLogger } from "@crm/logger";
import { uuidv7, type EventEnvelope } from "@crm/contracts";
import { testInfra, uniqueName, waitFor } from "@crm/testing";
import { InProcessBus } from "./in-process-bus";
import { KafkaBus, messageRejectionOf } from "./kafka-bus";
import { OutboxRelay, type OutboxRow, type OutboxStore } from "./outbox-relay";
import { DEFAULT_MAX_BATCH_BYTES, encodedSize, publishBatches } from "./publish-batches";
import { MessageRejectedError, valueJson, type BusMessage, type BusValue, type EventBus, type SerializedEnvelope } from "./event-bus";

const logger = createLogger({ service: "test", level: "silent" });

function event(businessId: string, n: number, padding = 0): EventEnvelope {
  const data = padding > 0 ? { n, notes: "x".repeat(padding) } : { n };
  return { id: uuidv7(), type: "client.created", businessId, occurredAt: new Date().toISOString(), version: 1, data };
}

/** Messages of one business keyed by it, carrying events numbered `ns`, in order. */
function numbered(businessId: string, ns: readonly number[]): BusMessage[] {
  return ns.map((n) => ({ key: businessId, value: event(businessId, n) }));
}

/** An envelope as the outbox store reads it: its JSON as stored (PostgreSQL's jsonb text, with spaces), id and type. */
function serialized(e: EventEnvelope): SerializedEnvelope {
  return { json: JSON.stringify(e, null, 1), id: e.id, type: e.type };
}

/** The envelope a message carries, whichever way it carries it. */
function envelopeOf(value: BusValue): EventEnvelope {
  return "json" in value ? (JSON.parse(value.json) as EventEnvelope) : value;
}

/** What a message weighs as Kafka carries it: the JSON value and the key. */
function wireBytes(messages: readonly BusMessage[]): number {
  return messages.reduce((sum, m) => sum + Buffer.byteLength(valueJson(m.value)) + Buffer.byteLength(m.key), 0);
}

/** A bus that records every publish call and refuses, for good, any call carrying a condemned event. */
class RecordingBus implements EventBus {
  readonly kind = "in-process" as const;
  readonly calls: BusMessage[][] = [];
  readonly condemned = new Set<string>();
  transientFailure: Error | undefined;
  /** Runs during each accepted publish, before it returns (e.g. a write committed meanwhile). */
  duringPublish: (() => void) | undefined;
  async publish(_topic: string, messages: readonly BusMessage[]) {
    if (this.transientFailure) throw this.transientFailure;
    if (messages.some((m) => this.condemned.has(m.value.id))) throw new MessageRejectedError("MESSAGE_TOO_LARGE");
    this.calls.push([...messages]);
    this.duringPublish?.();
  }
  published(): number[] {
    return this.calls.flat().map((m) => envelopeOf(m.value).data.n as number);
  }
  async subscribe(): Promise<never> {
    throw new Error("not used");
  }
  async ping() {}
  async close() {}
}

/** An outbox kept in memory: the relay's contract without a database (the Prisma store has its own tests). */
class MemoryOutbox implements OutboxStore {
  rows: Array<OutboxRow & { sent: boolean; deadLetter?: string }> = [];
  deadLetterCalls: bigint[] = [];
  leaseHolder: string | undefined;
  leaseCalls = 0;
  add(topic: string, e: EventEnvelope) {
    // As the SQL store reads it: the JSON as stored.
    this.rows.push({ sequence: BigInt(this.rows.length + 1), topic, key: e.businessId, payload: serialized(e), sent: false });
    return e;
  }
  /** Calls of the store's reads and marks, by name. */
  readonly calls = { pending: 0, markSent: 0, markSentAndPending: 0 };
  async pending(limit: number) {
    this.calls.pending += 1;
    return this.rows.filter((r) => !r.sent && r.deadLetter === undefined).slice(0, limit);
  }
  async deadLetter(sequence: bigint, reason: string) {
    this.deadLetterCalls.push(sequence);
    const row = this.rows.find((r) => r.sequence === sequence);
    if (row) row.deadLetter = reason;
  }
  async markSent(sequences: readonly bigint[]) {
    this.calls.markSent += 1;
    for (const r of this.rows) if (sequences.includes(r.sequence)) r.sent = true;
  }
  async acquireLease(holder: string) {
    this.leaseCalls += 1;
    if (this.leaseHolder && this.leaseHolder !== holder) return false;
    this.leaseHolder = holder;
    return true;
  }
  async releaseLease(holder: string) {
    if (this.leaseHolder === holder) this.leaseHolder = undefined;
  }
}

/** The same outbox, marking a publish's rows and reading the rows behind them in one call. */
class MergingMemoryOutbox extends MemoryOutbox {
  async markSentAndPending(sequences: readonly bigint[], limit: number) {
    this.calls.markSentAndPending += 1;
    for (const r of this.rows) if (sequences.includes(r.sequence)) r.sent = true;
    return this.rows.filter((r) => !r.sent && r.deadLetter === undefined).slice(0, limit);
  }
}

/** The relay's contract holds with either kind of store. */
const STORES = [
  ["marks and reads apart", MemoryOutbox],
  ["marks and reads in one call", MergingMemoryOutbox],
] as const;

describe("InProcessBus", () => {
  it("delivers to one handler per group, in order, to every group", async () => {
    const bus = new InProcessBus();
    const a: number[] = [];
    const b1: number[] = [];
    const b2: number[] = [];
    await bus.subscribe({ topic: "t", groupId: "a", handler: async (e) => void a.push(e.data.n as number) });
    await bus.subscribe({ topic: "t", groupId: "b", handler: async (e) => void b1.push(e.data.n as number) });
    await bus.subscribe({ topic: "t", groupId: "b", handler: async (e) => void b2.push(e.data.n as number) });
    await bus.publish(
      "t",
      [1, 2, 3, 4].map((n) => ({ key: "x", value: event("x", n) })),
    );
    expect(a).toEqual([1, 2, 3, 4]);
    expect([...b1, ...b2].sort()).toEqual([1, 2, 3, 4]);
  });

  it("refuses for good a message larger than its limit, as a Kafka broker does, and delivers nothing of that publish", async () => {
    const bus = new InProcessBus({ maxMessageBytes: 1000 });
    const seen: number[] = [];
    await bus.subscribe({ topic: "t", groupId: "a", handler: async (e) => void seen.push(e.data.n as number) });
    const publish = bus.publish("t", [
      { key: "x", value: event("x", 1) },
      { key: "x", value: event("x", 2, 2000) },
    ]);
    await expect(publish).rejects.toBeInstanceOf(MessageRejectedError);
    expect(seen).toEqual([]);
    await bus.publish("t", [{ key: "x", value: event("x", 3, 500) }]);
    expect(seen).toEqual([3]);
  });

  it("hands each group its own envelope parsed from a serialised one, and weighs that by its JSON", async () => {
    const bus = new InProcessBus();
    const seen: EventEnvelope[] = [];
    await bus.subscribe({ topic: "t", groupId: "a", handler: async (e) => void seen.push(e) });
    await bus.subscribe({ topic: "t", groupId: "b", handler: async (e) => void seen.push(e) });
    const sent = event("x", 1);
    await bus.publish("t", [{ key: "x", value: serialized(sent) }]);
    expect(seen).toEqual([sent, sent]);
    expect(seen[0]).not.toBe(seen[1]);
    // Within the limit once serialised compactly, over it as sent: refused by what it weighs as sent.
    const padded = event("x", 2, 500);
    const compact = Buffer.byteLength(JSON.stringify(padded)) + 1;
    expect(Buffer.byteLength(serialized(padded).json) + 1).toBeGreaterThan(compact + 5);
    const small = new InProcessBus({ maxMessageBytes: compact + 5 });
    await small.subscribe({ topic: "t", groupId: "a", handler: async (e) => void seen.push(e) });
    await small.publish("t", [{ key: "x", value: padded }]);
    await expect(small.publish("t", [{ key: "x", value: serialized(padded) }])).rejects.toBeInstanceOf(MessageRejectedError);
  });

  it("fails the publish when no group listens or a handler fails, so nothing is lost", async () => {
    const bus = new InProcessBus();
    await expect(bus.publish("t", [{ key: "x", value: event("x", 1) }])).rejects.toThrow(/no consumer/);
    await bus.subscribe({ topic: "t", groupId: "a", handler: async () => Promise.reject(new Error("boom")) });
    await expect(bus.publish("t", [{ key: "x", value: event("x", 1) }])).rejects.toThrow("boom");
  });
});

describe("InProcessBus with a batch handler", () => {
  it("hands one publish's messages to it at once, in order, while a plain handler of another group gets them one by one", async () => {
    const bus = new InProcessBus();
    const batches: number[][] = [];
    const single: number[] = [];
    await bus.subscribe({ topic: "t", groupId: "batch", batchHandler: async (events) => void batches.push(events.map((e) => e.event.data.n as number)) });
    await bus.subscribe({ topic: "t", groupId: "one", handler: async (e) => void single.push(e.data.n as number) });
    await bus.publish(
      "t",
      [1, 2, 3].map((n) => ({ key: "x", value: event("x", n), headers: { traceparent: `tp-${n}` } })),
    );
    await bus.publish("t", [{ key: "x", value: event("x", 4) }]);
    expect(batches).toEqual([[1, 2, 3], [4]]);
    expect(single).toEqual([1, 2, 3, 4]);
  });

  it("gives each event its own headers, and fails the publish when the batch fails", async () => {
    const bus = new InProcessBus();
    const headers: string[] = [];
    await bus.subscribe({ topic: "t", groupId: "a", batchHandler: async (events) => void headers.push(...events.map((e) => e.context.headers.traceparent ?? "")) });
    await bus.publish(
      "t",
      [1, 2].map((n) => ({ key: "x", value: event("x", n), headers: { traceparent: `tp-${n}` } })),
    );
    expect(headers).toEqual(["tp-1", "tp-2"]);
    await bus.subscribe({ topic: "u", groupId: "a", batchHandler: async () => Promise.reject(new Error("boom")) });
    await expect(bus.publish("u", [{ key: "x", value: event("x", 1) }])).rejects.toThrow("boom");
  });
});

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
    const relay = new OutboxRelay({ store, bus, logger, holder: "me", intervalMs: 10_000, leaseMs: 6000 });
    relay.start();
    for (let n = 1; n <= 5; n++) {
      store.add("t", event("b", n));
      relay.kick();
      await waitFor(() => store.rows.every((r) => r.sent), 2000);
    }
    expect(store.leaseCalls).toBe(1);
    await new Promise((r) => setTimeout(r, 3100)); // past half the term
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

describe("Kafka answers that condemn the message", () => {
  const protocolError = (type: string, code: number, retriable: boolean) =>
    new KafkaJSProtocolError({ type, code, retriable, message: `${type} from the broker` } as unknown as Error);

  it("recognises MESSAGE_TOO_LARGE as kafkajs throws it, wrapped or not", () => {
    const tooLarge = protocolError("MESSAGE_TOO_LARGE", 10, false);
    expect(messageRejectionOf(tooLarge)?.type).toBe("MESSAGE_TOO_LARGE");
    expect(messageRejectionOf(new (KafkaJSNonRetriableError as unknown as new (e: Error, o: object) => Error)(tooLarge, { cause: tooLarge }))?.type).toBe("MESSAGE_TOO_LARGE");
  });

  it("leaves setup and connection failures to the retry loop, even when kafkajs calls them non-retriable", () => {
    const down = new KafkaJSConnectionError("Connection error: ECONNREFUSED");
    expect(messageRejectionOf(new (KafkaJSNumberOfRetriesExceeded as unknown as new (e: Error, o: object) => Error)(down, { retryCount: 5, retryTime: 1000 }))).toBeUndefined();
    expect(messageRejectionOf(protocolError("TOPIC_AUTHORIZATION_FAILED", 29, false))).toBeUndefined();
    expect(messageRejectionOf(new Error("anything else"))).toBeUndefined();
  });
});

const describeKafka = testInfra.kafkaBrokers ? describe : describe.skip;
describeKafka("KafkaBus (KAFKA_BROKERS, testcontainers or librdkafka mock)", () => {
  jest.setTimeout(60_000);
  let bus: EventBus;
  beforeAll(() => {
    bus = new KafkaBus({ brokers: testInfra.kafkaBrokers!.split(","), clientId: uniqueName("test"), logger });
  });
  afterAll(() => bus.close());

  it("publishes and consumes in order per key, and a second group gets everything too", async () => {
    const topic = uniqueName("topic");
    const business = randomUUID();
    const events = [1, 2, 3, 4, 5].map((n) => event(business, n));
    await bus.publish(
      topic,
      events.map((value) => ({ key: business, value })),
    );
    const seenA: number[] = [];
    const seenB: number[] = [];
    const subA = await bus.subscribe({ topic, groupId: uniqueName("group"), handler: async (e) => void seenA.push(e.data.n as number) });
    const subB = await bus.subscribe({ topic, groupId: uniqueName("group"), handler: async (e) => void seenB.push(e.data.n as number) });
    await waitFor(() => seenA.length >= 5 && seenB.length >= 5, 45_000, 100);
    expect(seenA).toEqual([1, 2, 3, 4, 5]);
    expect(seenB).toEqual([1, 2, 3, 4, 5]);
    await subA.stop();
    await subB.stop();
  });

  it("carries a serialised envelope's JSON as it is, with its event-type header", async () => {
    const topic = uniqueName("topic");
    const business = randomUUID();
    const sent = [1, 2].map((n) => event(business, n));
    await bus.publish(
      topic,
      sent.map((e) => ({ key: business, value: serialized(e) })),
    );
    const kafka = new Kafka({ brokers: testInfra.kafkaBrokers!.split(","), clientId: uniqueName("raw"), logLevel: logLevel.NOTHING });
    const consumer = kafka.consumer({ groupId: uniqueName("group"), maxWaitTimeInMs: 100 });
    const raw: Array<{ value: string; type: string }> = [];
    await consumer.connect();
    await consumer.subscribe({ topic, fromBeginning: true });
    await consumer.run({ eachMessage: async ({ message }) => void raw.push({ value: message.value!.toString(), type: message.headers!["event-type"]!.toString() }) });
    const seen: EventEnvelope[] = [];
    const sub = await bus.subscribe({ topic, groupId: uniqueName("group"), handler: async (e) => void seen.push(e) });
    await waitFor(() => raw.length >= 2 && seen.length >= 2, 45_000, 100);
    await consumer.disconnect();
    await sub.stop();
    expect(raw).toEqual(sent.map((e) => ({ value: serialized(e).json, type: "client.created" })));
    expect(seen).toEqual(sent);
  });

  it("without waiting for the group join, misses nothing published before or during the join", async () => {
    const topic = uniqueName("topic");
    const business = randomUUID();
    await bus.publish(topic, numbered(business, [1, 2]));
    const seen: number[] = [];
    const sub = await bus.subscribe({ topic, groupId: uniqueName("group"), handler: async (e) => void seen.push(e.data.n as number), waitForJoin: false });
    // Published while the consumer is still joining (the broker's rebalance delay is seconds).
    await bus.publish(topic, numbered(business, [3, 4]));
    expect(sub.failure?.()).toBeUndefined();
    await waitFor(() => seen.length >= 4, 45_000, 100);
    expect(seen).toEqual([1, 2, 3, 4]);
    await sub.stop();
  });

  it("hands a batch handler the events of a fetch together, in order, and nothing twice", async () => {
    const topic = uniqueName("topic");
    const business = randomUUID();
    // One publish is one record batch: one fetch returns all of it.
    await bus.publish(topic, numbered(business, [1, 2, 3, 4, 5]));
    const batches: number[][] = [];
    const sub = await bus.subscribe({ topic, groupId: uniqueName("group"), batchHandler: async (events) => void batches.push(events.map((e) => e.event.data.n as number)) });
    await waitFor(() => batches.flat().length >= 5, 45_000, 100);
    expect(batches.flat()).toEqual([1, 2, 3, 4, 5]);
    expect(batches.length).toBeLessThan(5);
    await sub.stop();
  });

  it("commits a batch consumer's handled events when it stops, so the group's next member starts after them", async () => {
    const topic = uniqueName("topic");
    const groupId = uniqueName("group");
    const business = randomUUID();
    await bus.publish(topic, numbered(business, [1, 2, 3]));
    const first: number[] = [];
    const sub = await bus.subscribe({ topic, groupId, batchHandler: async (events) => void first.push(...events.map((e) => e.event.data.n as number)) });
    await waitFor(() => first.length >= 3, 45_000, 100);
    await sub.stop();
    await bus.publish(topic, numbered(business, [4, 5]));
    const second: number[] = [];
    const next = await bus.subscribe({ topic, groupId, batchHandler: async (events) => void second.push(...events.map((e) => e.event.data.n as number)) });
    await waitFor(() => second.length >= 2, 45_000, 100);
    expect(first).toEqual([1, 2, 3]);
    expect(second).toEqual([4, 5]);
    await next.stop();
  });

  it("publishes without KafkaJS's warning about its default partitioner", async () => {
    // KafkaJS warns once per loaded module, so this test loads a module of its own.
    let FreshBus!: typeof KafkaBus;
    jest.isolateModules(() => {
      FreshBus = (require("./kafka-bus") as typeof import("./kafka-bus")).KafkaBus;
    });
    const lines: string[] = [];
    const destination = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(chunk.toString("utf8"));
        done();
      },
    });
    const fresh = new FreshBus({
      brokers: testInfra.kafkaBrokers!.split(","),
      clientId: uniqueName("test"),
      logger: createLogger({ service: "test", level: "info", destination }),
    });
    try {
      await fresh.publish(uniqueName("topic"), numbered(randomUUID(), [1]));
    } finally {
      await fresh.close();
    }
    expect(lines.filter((line) => /partitioner/i.test(line))).toEqual([]);
  });

  it("commits a batch consumer's handled events while it runs, once events stop coming", async () => {
    const topic = uniqueName("topic");
    const groupId = uniqueName("group");
    const business = randomUUID();
    const idleBus = new KafkaBus({ brokers: testInfra.kafkaBrokers!.split(","), clientId: uniqueName("test"), logger, consumer: { commitIntervalMs: 200 } });
    const admin = new Kafka({ brokers: testInfra.kafkaBrokers!.split(","), logLevel: logLevel.NOTHING }).admin();
    await admin.connect();
    try {
      await idleBus.publish(topic, numbered(business, [1, 2, 3]));
      const seen: number[] = [];
      const sub = await idleBus.subscribe({ topic, groupId, batchHandler: async (events) => void seen.push(...events.map((e) => e.event.data.n as number)) });
      await waitFor(() => seen.length >= 3, 45_000, 100);
      const committed = async () => (await admin.fetchOffsets({ groupId, topics: [topic] }))[0]!.partitions.reduce((sum, p) => sum + Math.max(0, Number(p.offset)), 0);
      await waitFor(async () => (await committed()) === 3, 10_000, 100);
      await sub.stop();
    } finally {
      await admin.disconnect();
      await idleBus.close();
    }
  });

  it("re-delivers a batch whose handler failed, from its first event", async () => {
    const topic = uniqueName("topic");
    const business = randomUUID();
    await bus.publish(topic, numbered(business, [1, 2, 3]));
    let failOnce = true;
    const seen: number[] = [];
    const sub = await bus.subscribe({
      topic,
      groupId: uniqueName("group"),
      batchHandler: async (events) => {
        if (failOnce) {
          failOnce = false;
          throw new Error("transient");
        }
        seen.push(...events.map((e) => e.event.data.n as number));
      },
    });
    await waitFor(() => seen.length >= 3, 45_000, 100);
    expect(seen.slice(0, 3)).toEqual([1, 2, 3]);
    await sub.stop();
  });

  it("re-delivers after a handler failure instead of skipping", async () => {
    const topic = uniqueName("topic");
    const business = randomUUID();
    await bus.publish(topic, numbered(business, [1, 2]));
    let failOnce = true;
    const seen: number[] = [];
    const sub = await bus.subscribe({
      topic,
      groupId: uniqueName("group"),
      handler: async (e) => {
        if (e.data.n === 1 && failOnce) {
          failOnce = false;
          throw new Error("transient");
        }
        seen.push(e.data.n as number);
      },
    });
    await waitFor(() => seen.length >= 2, 45_000, 100);
    expect(seen.slice(0, 2)).toEqual([1, 2]);
    await sub.stop();
  });
});
