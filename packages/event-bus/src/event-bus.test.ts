import { randomUUID } from "node:crypto";
import { Writable } from "node:stream";
import { Kafka, KafkaJSConnectionError, KafkaJSNonRetriableError, KafkaJSNumberOfRetriesExceeded, KafkaJSProtocolError, logLevel } from "kafkajs";
import { createLogger } from "@crm/logger";
import type { EventEnvelope } from "@crm/contracts";
import { testInfra, uniqueName, waitFor } from "@crm/testing";
import { InProcessBus } from "./in-process-bus";
import { KafkaBus, messageRejectionOf } from "./kafka-bus";
import { MessageRejectedError, type EventBus } from "./event-bus";
import { event, logger, numbered, serialized } from "./bus-test-fixtures";

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
  // Concurrent: each test spends its seconds waiting on the broker (a group join waits out its
  // rebalance delay, 3 s on librdkafka's mock), and each has topics and groups of its own.
  let bus: EventBus;
  beforeAll(() => {
    bus = new KafkaBus({ brokers: testInfra.kafkaBrokers!.split(","), clientId: uniqueName("test"), logger });
  });
  afterAll(() => bus.close());

  it.concurrent("publishes and consumes in order per key, and a second group gets everything too", async () => {
    const topic = uniqueName("topic");
    const business = randomUUID();
    const events = [1, 2, 3, 4, 5].map((n) => event(business, n));
    await bus.publish(
      topic,
      events.map((value) => ({ key: business, value })),
    );
    const seenA: number[] = [];
    const seenB: number[] = [];
    // Both groups join at once: each join waits out the broker's rebalance delay (3 s on librdkafka's mock).
    const [subA, subB] = await Promise.all([
      bus.subscribe({ topic, groupId: uniqueName("group"), handler: async (e) => void seenA.push(e.data.n as number) }),
      bus.subscribe({ topic, groupId: uniqueName("group"), handler: async (e) => void seenB.push(e.data.n as number) }),
    ]);
    await waitFor(() => seenA.length >= 5 && seenB.length >= 5, 45_000, 100);
    expect(seenA).toEqual([1, 2, 3, 4, 5]);
    expect(seenB).toEqual([1, 2, 3, 4, 5]);
    await subA.stop();
    await subB.stop();
  });

  it.concurrent("carries a serialised envelope's JSON as it is, with its event-type header", async () => {
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
    const seen: EventEnvelope[] = [];
    // Both groups join at once: each join waits out the broker's rebalance delay (3 s on librdkafka's mock).
    const [, sub] = await Promise.all([
      consumer.run({ eachMessage: async ({ message }) => void raw.push({ value: message.value!.toString(), type: message.headers!["event-type"]!.toString() }) }),
      bus.subscribe({ topic, groupId: uniqueName("group"), handler: async (e) => void seen.push(e) }),
    ]);
    await waitFor(() => raw.length >= 2 && seen.length >= 2, 45_000, 100);
    await consumer.disconnect();
    await sub.stop();
    expect(raw).toEqual(sent.map((e) => ({ value: serialized(e).json, type: "client.created" })));
    expect(seen).toEqual(sent);
  });

  it.concurrent("without waiting for the group join, misses nothing published before or during the join", async () => {
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

  it.concurrent("hands a batch handler the events of a fetch together, in order, and nothing twice", async () => {
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

  it.concurrent("commits a batch consumer's handled events when it stops, so the group's next member starts after them", async () => {
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

  it.concurrent("publishes without KafkaJS's warning about its default partitioner", async () => {
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

  it.concurrent("commits a batch consumer's handled events while it runs, once events stop coming", async () => {
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

  it.concurrent("re-delivers a batch whose handler failed, from its first event", async () => {
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

  it.concurrent("re-delivers after a handler failure instead of skipping", async () => {
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
