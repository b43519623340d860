import { randomUUID } from "node:crypto";
import { createLogger } from "@crm/logger";
import { uuidv7, type EventEnvelope } from "@crm/contracts";
import { testInfra, uniqueName, waitFor } from "@crm/testing";
import { InProcessBus } from "./in-process-bus";
import { KafkaBus } from "./kafka-bus";
import { OutboxRelay, type OutboxRow, type OutboxStore } from "./outbox-relay";
import type { EventBus } from "./event-bus";

const logger = createLogger({ service: "test", level: "silent" });

function event(businessId: string, n: number): EventEnvelope {
  return { id: uuidv7(), type: "client.created", businessId, occurredAt: new Date().toISOString(), version: 1, data: { n } };
}

/** An outbox kept in memory: the relay's contract without a database (the Prisma store has its own tests). */
class MemoryOutbox implements OutboxStore {
  rows: Array<OutboxRow & { sent: boolean }> = [];
  leaseHolder: string | undefined;
  add(topic: string, e: EventEnvelope) {
    this.rows.push({ sequence: BigInt(this.rows.length + 1), topic, key: e.businessId, payload: e, sent: false });
  }
  async pending(limit: number) {
    return this.rows.filter((r) => !r.sent).slice(0, limit);
  }
  async markSent(sequences: readonly bigint[]) {
    for (const r of this.rows) if (sequences.includes(r.sequence)) r.sent = true;
  }
  async acquireLease(holder: string) {
    if (this.leaseHolder && this.leaseHolder !== holder) return false;
    this.leaseHolder = holder;
    return true;
  }
  async releaseLease(holder: string) {
    if (this.leaseHolder === holder) this.leaseHolder = undefined;
  }
}

describe("InProcessBus", () => {
  it("delivers to one handler per group, in order, to every group", async () => {
    const bus = new InProcessBus();
    const a: number[] = [];
    const b1: number[] = [];
    const b2: number[] = [];
    await bus.subscribe({ topic: "t", groupId: "a", handler: async (e) => void a.push(e.data.n as number) });
    await bus.subscribe({ topic: "t", groupId: "b", handler: async (e) => void b1.push(e.data.n as number) });
    await bus.subscribe({ topic: "t", groupId: "b", handler: async (e) => void b2.push(e.data.n as number) });
    await bus.publish("t", [1, 2, 3, 4].map((n) => ({ key: "x", value: event("x", n) })));
    expect(a).toEqual([1, 2, 3, 4]);
    expect([...b1, ...b2].sort()).toEqual([1, 2, 3, 4]);
  });

  it("fails the publish when no group listens or a handler fails, so nothing is lost", async () => {
    const bus = new InProcessBus();
    await expect(bus.publish("t", [{ key: "x", value: event("x", 1) }])).rejects.toThrow(/no consumer/);
    await bus.subscribe({ topic: "t", groupId: "a", handler: async () => Promise.reject(new Error("boom")) });
    await expect(bus.publish("t", [{ key: "x", value: event("x", 1) }])).rejects.toThrow("boom");
  });
});

describe("OutboxRelay", () => {
  it("publishes pending rows in order and keeps them until the bus accepts them", async () => {
    const bus = new InProcessBus();
    const store = new MemoryOutbox();
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
    const store = new MemoryOutbox();
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
    await bus.publish(topic, events.map((value) => ({ key: business, value })));
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

  it("re-delivers after a handler failure instead of skipping", async () => {
    const topic = uniqueName("topic");
    const business = randomUUID();
    await bus.publish(topic, [1, 2].map((n) => ({ key: business, value: event(business, n) })));
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
