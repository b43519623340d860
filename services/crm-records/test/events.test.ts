// Events: every write commits exactly one outbox row (the envelope of decisions §6) with the change,
// the relay publishes them in order, and a relay stopped between commit and publish loses nothing:
// rows stay pending and leave once a relay runs again. In-process bus on PGlite; Kafka on PostgreSQL.
import { isUuid, RECORDS_TOPIC, uuidv7, type EventEnvelope, type RecordEntity } from "@crm/contracts";
import { InProcessBus, KafkaBus, OutboxRelay, type EventBus, type OutboxRow, type Subscription } from "@crm/event-bus";
import { describeDistributed, testInfra, uniqueName, waitFor } from "@crm/testing";
import { SqlOutboxStore } from "../src/persistence/outbox.store";
import { createClient, logger, openHarness, type Caller, type Harness } from "./harness";

const item = { description: "Work", quantity: 1.5, unitPrice: 10 };

/**
 * An event over the bus's 1 MiB message limit, committed straight to the outbox: the write-time
 * limits make such an event impossible through the API, so this stands for a row written before them.
 */
async function insertOversizedEvent(h: Harness, businessId: string, clientId: string): Promise<string> {
  const id = uuidv7();
  const payload: EventEnvelope = {
    id,
    type: "client.updated",
    businessId,
    occurredAt: new Date().toISOString(),
    version: 1,
    data: { id: clientId, notes: "x".repeat(1_100_000) },
  };
  await h.prisma.outboxEvent.create({ data: { id, topic: RECORDS_TOPIC, key: businessId, payload: payload as object } });
  return id;
}

async function outboxRows(h: Harness, businessId: string) {
  const rows = await h.prisma.outboxEvent.findMany({ where: { key: businessId }, orderBy: { sequence: "asc" } });
  return rows.map((r) => ({ ...r, payload: r.payload as unknown as EventEnvelope }));
}

/**
 * The relay's mark-and-read: the rows it names marked sent and the rows behind them read, in one
 * statement (the relay must be stopped: it would publish them).
 */
async function marksAndReadsBehind(h: Harness, store: SqlOutboxStore): Promise<void> {
  const caller = h.caller({ businessId: uuidv7() });
  for (let i = 0; i < 3; i++) await createClient(caller);
  const ours = (rows: readonly OutboxRow[]) => rows.filter((r) => r.key === caller.businessId).map((r) => r.sequence);
  const pending = (await store.pending(1000)).filter((r) => r.key === caller.businessId);
  // Each payload is the stored envelope's JSON, as it is, with the envelope's id and type beside it.
  const stored = await outboxRows(h, caller.businessId);
  expect(pending.map((r) => ("json" in r.payload ? { envelope: JSON.parse(r.payload.json), id: r.payload.id, type: r.payload.type } : r.payload))).toEqual(
    stored.map((r) => ({ envelope: r.payload, id: r.payload.id, type: "client.created" })),
  );
  const [a, b, c] = ours(pending);
  expect(ours(await store.markSentAndPending([a!], 1000))).toEqual([b, c]);
  expect((await outboxRows(h, caller.businessId)).map((r) => r.sentAt !== null)).toEqual([true, false, false]);
  expect(ours(await store.markSentAndPending([b!, c!], 1000))).toEqual([]);
  expect((await outboxRows(h, caller.businessId)).every((r) => r.sentAt !== null)).toBe(true);
}

describe("events through the outbox (PGlite, in-process bus)", () => {
  let h: Harness;
  let relay: OutboxRelay;
  let store: SqlOutboxStore;
  const bus = new InProcessBus();
  const received: EventEnvelope[] = [];

  beforeAll(async () => {
    h = await openHarness("pglite", { onCommitted: () => relay?.kick() });
    store = new SqlOutboxStore(h.db.sql);
    await bus.subscribe({ topic: RECORDS_TOPIC, groupId: "test", handler: async (event) => void received.push(event) });
    relay = new OutboxRelay({ store, bus, logger, holder: "relay-1", intervalMs: 50 });
    relay.start();
  });
  afterAll(async () => {
    await relay?.stop();
    await h?.close();
  });

  it("writes exactly one event per create, update and delete, with the record as GET returns it", async () => {
    const caller = h.caller();
    const clientId = await createClient(caller);
    const bodies: Record<RecordEntity, object> = {
      client: { firstName: "Ev", lastName: "Ent", email: "ev@example.com" },
      contact: { clientId, type: "EMAIL", value: "ev@example.com" },
      invoice: { clientId, items: [item] },
      quote: { clientId, items: [item] },
      product: { name: "P", unitPrice: 1.25 },
      service: { name: "S" },
      employee: { firstName: "E", lastName: "Mployee" },
    };
    for (const [entity, body] of Object.entries(bodies) as Array<[RecordEntity, object]>) {
      const count = (await outboxRows(h, caller.businessId)).length;
      const created = (await caller.post(`/${entity}`, body).expect(201)).body.data;
      const updated = (await caller.patch(`/${entity}/${created.id}`, {}).expect(200)).body.data;
      await caller.post(`/${entity}`, { ...body, unknownField: 1 }).expect(400); // failed writes emit nothing
      const deleted = (await caller.delete(`/${entity}/${created.id}`).expect(200)).body.data;
      const rows = (await outboxRows(h, caller.businessId)).slice(count);
      expect(rows.map((r) => r.payload.type)).toEqual([`${entity}.created`, `${entity}.updated`, `${entity}.deleted`]);
      expect(rows.map((r) => r.payload.data)).toEqual([created, updated, deleted]);
      for (const row of rows) {
        expect(row.topic).toBe(RECORDS_TOPIC);
        expect(row.payload).toEqual({
          id: row.id,
          type: expect.any(String),
          businessId: caller.businessId,
          occurredAt: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
          version: 1,
          data: expect.any(Object),
          // An empty PATCH changes nothing (extensions §E1.4); only updates carry the field.
          ...(row.payload.type.endsWith(".updated") && { previousAttributes: {} }),
        });
        expect(isUuid(row.id) && row.id[14] === "7").toBe(true);
      }
    }
    const clientCreated = (await outboxRows(h, caller.businessId)).find((r) => r.payload.type === "client.created" && r.payload.data["firstName"] === "Ev");
    expect(Object.keys(clientCreated!.payload.data)).toEqual(expect.arrayContaining(["id", "firstName", "lastName", "email", "businessId", "createdAt"]));

    // The relay publishes all of them, in outbox order, and marks them sent.
    const ids = (await outboxRows(h, caller.businessId)).map((r) => r.id);
    await waitFor(() => ids.every((id) => received.some((e) => e.id === id)), 10_000);
    expect(received.filter((e) => e.businessId === caller.businessId).map((e) => e.id)).toEqual(ids);
    await waitFor(async () => (await outboxRows(h, caller.businessId)).every((r) => r.sentAt !== null), 5_000);
  });

  it("loses nothing when the relay stops between commit and publish", async () => {
    const caller = h.caller();
    await relay.stop();
    const before = received.length;
    const clientId = await createClient(caller);
    await caller.post("/invoice", { clientId, items: [item] }).expect(201);
    await caller.patch(`/client/${clientId}`, { notes: "while the relay was down" }).expect(200);
    await new Promise((r) => setTimeout(r, 200));
    const pending = await outboxRows(h, caller.businessId);
    expect(pending.map((r) => [r.payload.type, r.sentAt])).toEqual([
      ["client.created", null],
      ["invoice.created", null],
      ["client.updated", null],
    ]);
    expect(received.length).toBe(before);

    relay = new OutboxRelay({ store, bus, logger, holder: "relay-2", intervalMs: 50 });
    relay.start();
    await waitFor(() => received.filter((e) => e.businessId === caller.businessId).length === 3, 10_000);
    expect(received.filter((e) => e.businessId === caller.businessId).map((e) => e.id)).toEqual(pending.map((r) => r.id));
    await waitFor(async () => (await outboxRows(h, caller.businessId)).every((r) => r.sentAt !== null), 5_000);
  });

  it("keeps events pending while the bus refuses them, and publishes them once it accepts", async () => {
    const caller = h.caller();
    let healthy = false;
    const flaky = new InProcessBus();
    const seen: string[] = [];
    await flaky.subscribe({
      topic: RECORDS_TOPIC,
      groupId: "flaky",
      handler: async (event) => {
        if (!healthy) throw new Error("consumer down");
        if (event.businessId === caller.businessId) seen.push(event.type);
      },
    });
    await relay.stop();
    relay = new OutboxRelay({ store, bus: flaky, logger, holder: "relay-3", intervalMs: 20 });
    relay.start();
    await caller.post("/product", { name: "Retry me" }).expect(201);
    await new Promise((r) => setTimeout(r, 150));
    expect((await outboxRows(h, caller.businessId))[0]!.sentAt).toBeNull();
    healthy = true;
    relay.kick();
    await waitFor(() => seen.length === 1, 10_000);
    expect(seen).toEqual(["product.created"]);
  });

  it("lets one relay hold the lease at a time", async () => {
    expect(await store.acquireLease("relay-3", 10_000)).toBe(true); // the running relay renews its own
    expect(await store.acquireLease("intruder", 10_000)).toBe(false);
    await relay.stop(); // releases it
    expect(await store.acquireLease("intruder", 10_000)).toBe(true);
    await store.releaseLease("intruder");
    relay = new OutboxRelay({ store, bus, logger, holder: "relay-4", intervalMs: 50 });
    relay.start();
  });

  it("dead-letters an event the bus refuses for good, and publishes the events behind it, of its business and of others", async () => {
    const caller = h.caller();
    const other = h.caller();
    await relay.stop();
    const clientId = await createClient(caller);
    const oversized = await insertOversizedEvent(h, caller.businessId, clientId);
    await caller.patch(`/client/${clientId}`, { notes: "behind the oversized event" }).expect(200);
    await createClient(other);

    relay = new OutboxRelay({ store, bus, logger, holder: "relay-5", intervalMs: 50 });
    relay.start();
    await waitFor(() => received.filter((e) => e.businessId === caller.businessId).length === 2 && received.some((e) => e.businessId === other.businessId), 10_000);
    expect(received.filter((e) => e.businessId === caller.businessId).map((e) => e.type)).toEqual(["client.created", "client.updated"]);
    expect(received.some((e) => e.id === oversized)).toBe(false);

    const row = await h.prisma.outboxEvent.findFirstOrThrow({ where: { id: oversized } });
    expect(row.sentAt).toBeNull();
    expect(row.deadLetteredAt).toBeInstanceOf(Date);
    expect(row.deadLetterError).toMatch(/larger than the bus accepts/);
    expect(relay.stats().deadLettered).toBe(1);
    await waitFor(async () => (await outboxRows(h, other.businessId)).every((r) => r.sentAt !== null), 5_000);
    expect((await store.pending(100)).map((r) => r.payload.id)).not.toContain(oversized);
  });

  it("marks a publish's rows sent in the statement that reads the rows behind them", async () => {
    await relay.stop();
    await marksAndReadsBehind(h, store);
    relay = new OutboxRelay({ store, bus, logger, holder: "relay-6", intervalMs: 50 });
    relay.start();
  });
});

describeDistributed("events through the outbox (PostgreSQL, Kafka)", () => {
  jest.setTimeout(60_000);
  let h: Harness;
  let relay: OutboxRelay;
  let store: SqlOutboxStore;
  let kafka: EventBus;
  let subscription: Subscription;
  let caller: Caller;
  const received: EventEnvelope[] = [];

  beforeAll(async () => {
    h = await openHarness("postgres", { onCommitted: () => relay?.kick() });
    caller = h.caller({ businessId: uuidv7() });
    kafka = new KafkaBus({ brokers: testInfra.kafkaBrokers!.split(","), clientId: uniqueName("crm-records-test"), logger });
    store = new SqlOutboxStore(h.db.sql);
    subscription = await kafka.subscribe({
      topic: RECORDS_TOPIC,
      groupId: uniqueName("crm-records-test"),
      handler: async (event) => {
        if (event.businessId === caller.businessId) received.push(event);
      },
    });
    relay = new OutboxRelay({ store, bus: kafka, logger, holder: "kafka-relay-1", intervalMs: 100 });
    relay.start();
  });
  afterAll(async () => {
    await relay?.stop();
    await subscription?.stop();
    await kafka?.close();
    await h?.close();
  });

  it("publishes each write once to crm.records.v1, keyed by business, and loses nothing across a relay restart", async () => {
    const clientId = await createClient(caller);
    await caller.post("/contact", { clientId, type: "EMAIL", value: "k@example.com" }).expect(201);
    await waitFor(() => received.length >= 2, 45_000, 100);

    await relay.stop();
    await caller.post("/invoice", { clientId, items: [item] }).expect(201);
    await caller.delete(`/client/${clientId}`).expect(409);
    await caller.patch(`/client/${clientId}`, { notes: "relay down" }).expect(200);
    const pending = (await outboxRows(h, caller.businessId)).filter((r) => r.sentAt === null);
    expect(pending.map((r) => r.payload.type)).toEqual(["invoice.created", "client.updated"]);

    relay = new OutboxRelay({ store, bus: kafka, logger, holder: "kafka-relay-2", intervalMs: 100 });
    relay.start();
    await waitFor(() => new Set(received.map((e) => e.id)).size >= 4, 45_000, 100);
    const rows = await outboxRows(h, caller.businessId);
    // At least once, in order: the first occurrence of each event follows the outbox sequence.
    expect([...new Set(received.map((e) => e.id))]).toEqual(rows.map((r) => r.id));
    expect(received.map((e) => e.type).filter((t, i, all) => all.indexOf(t) === i)).toEqual(["client.created", "contact.created", "invoice.created", "client.updated"]);
  });

  // librdkafka's mock cluster accepts messages of any size (5 MB checked), so MESSAGE_TOO_LARGE
  // cannot be reproduced here; kafkajs's form of it is unit-tested in @crm/event-bus. What this
  // shows on Kafka: a round of events far above 1 MiB in all leaves in bounded requests, in order.
  it("publishes a backlog of several MiB of large events in order, in requests bounded by bytes", async () => {
    await relay.stop();
    const clientId = await createClient(caller);
    const before = new Set(received.map((e) => e.id));
    const items = Array.from({ length: 200 }, (_, i) => ({ description: `${i} `.padEnd(200, "x"), quantity: 1, unitPrice: 1 }));
    for (let i = 0; i < 40; i++) await caller.post("/invoice", { clientId, items }).expect(201);
    const pending = (await outboxRows(h, caller.businessId)).filter((r) => r.sentAt === null);
    const backlogBytes = pending.reduce((sum, r) => sum + Buffer.byteLength(JSON.stringify(r.payload)), 0);
    expect(backlogBytes).toBeGreaterThan(1.5 * 1024 * 1024);

    relay = new OutboxRelay({ store, bus: kafka, logger, holder: "kafka-relay-3", intervalMs: 100 });
    relay.start();
    await waitFor(() => pending.every((r) => received.some((e) => e.id === r.id)), 45_000, 100);
    const fresh = received.filter((e) => !before.has(e.id)).map((e) => e.id);
    expect([...new Set(fresh)]).toEqual(pending.map((r) => r.id));
    // The relay counts a batch once the bus has acknowledged it and the rows are marked sent, which
    // can come after the consumer has already seen the batch's events.
    await waitFor(() => relay.stats().published >= pending.length, 10_000, 50);
    expect(relay.stats()).toMatchObject({ published: pending.length, deadLettered: 0 });
  }, 120_000); // 40 large writes and a 2 MB backlog: slow on a loaded machine, not stuck

  it("marks a publish's rows sent in the statement that reads the rows behind them", async () => {
    await relay.stop();
    await marksAndReadsBehind(h, store);
    relay = new OutboxRelay({ store, bus: kafka, logger, holder: "kafka-relay-4", intervalMs: 100 });
    relay.start();
  });
});
