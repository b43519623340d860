// The change feed (extensions §E6) on the service: events in the order the relay made them readable,
// each exactly once (also while writers race), only readable entities, opaque cursors bound to the
// business, 410000 past retention, and `wait` woken by the relay rather than by polling.
import { allPermissions, uuidv7, type EventEnvelope } from "@crm/contracts";
import { InProcessBus, OutboxRelay } from "@crm/event-bus";
import { describeEachMode } from "@crm/testing";
import { FeedWaiters } from "../src/application/feed-waiters";
import { SqlOutboxStore } from "../src/persistence/outbox.store";
import { allRecordPermissions, type Caller, createClient, type Harness, logger, openHarness } from "./harness";

jest.setTimeout(60_000);

describeEachMode("change feed on %s", (mode) => {
  let h: Harness;
  let relay: OutboxRelay;
  const bus = new InProcessBus();
  const published: EventEnvelope[] = [];
  const waiters = new FeedWaiters();

  beforeAll(async () => {
    h = await openHarness(mode, { onCommitted: () => relay.kick(), feedWaiters: waiters });
    await bus.subscribe({ topic: "crm.records.v1", groupId: `feed-${uuidv7()}`, handler: async (event) => void published.push(event as EventEnvelope) });
    relay = new OutboxRelay({ store: new SqlOutboxStore(h.db.sql, (ids) => waiters.wake(ids)), bus, logger, holder: `feed-test-${uuidv7()}`, intervalMs: 50 });
    relay.start();
  });
  afterAll(async () => {
    await relay.stop();
    await h.close();
  });

  /** Reads the whole feed of `caller` from `after` (all of it when undefined), page by page. */
  async function readAll(caller: Caller, query = "", after?: string): Promise<{ events: EventEnvelope[]; cursor: string }> {
    const events: EventEnvelope[] = [];
    let cursor = after;
    for (let page = 0; page < 100; page++) {
      const res = await caller.get(`/events?perPage=7${query}${cursor ? `&after=${cursor}` : ""}`);
      expect(res.status).toBe(200);
      events.push(...res.body.data);
      expect(typeof res.body.meta.nextCursor).toBe("string");
      cursor = res.body.meta.nextCursor;
      if (!res.body.meta.hasMore) return { events, cursor: cursor! };
    }
    throw new Error("feed did not end");
  }

  async function settled(caller: Caller, count: number): Promise<EventEnvelope[]> {
    for (let i = 0; i < 200; i++) {
      const { events } = await readAll(caller);
      if (events.length >= count) return events;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    throw new Error("events did not reach the feed");
  }

  it("returns the bus envelopes in order, each once, paged by cursor; nextCursor is never null", async () => {
    const caller = h.caller();
    const id = await createClient(caller);
    await caller.patch(`/client/${id}`, { lastName: "Byron" });
    for (let i = 0; i < 10; i++) await createClient(caller, { firstName: `C${i}` });
    await caller.delete(`/client/${id}`);
    const events = await settled(caller, 13);
    expect(events.map((e) => e.type)).toEqual(["client.created", "client.updated", ...Array(10).fill("client.created"), "client.deleted"]);
    expect(events[1]!.previousAttributes).toEqual({ lastName: "Lovelace" });
    const ours = published.filter((e) => e.businessId === caller.businessId);
    expect(events).toEqual(ours);
    // Resuming at the end gives nothing, with a cursor to resume from again.
    const { cursor } = await readAll(caller);
    const end = await caller.get(`/events?after=${cursor}`);
    expect(end.body).toEqual({ success: true, data: [], meta: { perPage: 100, nextCursor: expect.any(String), hasMore: false } });
    await createClient(caller, { firstName: "Later" });
    let later: EventEnvelope[] = [];
    for (let i = 0; i < 200 && later.length === 0; i++) {
      later = (await readAll(caller, "", end.body.meta.nextCursor)).events;
      if (later.length === 0) await new Promise((resolve) => setTimeout(resolve, 25));
    }
    expect(later.map((e) => (e.data as { firstName: string }).firstName)).toEqual(["Later"]);
  });

  it("filters by types, refuses unknown names and too many, and shows only what the caller may read", async () => {
    const businessId = uuidv7();
    const all = h.caller({ businessId });
    const clientId = await createClient(all);
    await all.post("/invoice", { clientId, items: [{ description: "Work", quantity: 1, unitPrice: 10 }] });
    await all.post("/product", { name: "Widget" });
    await settled(all, 3);
    expect((await readAll(all, "&types=invoice.*,product.created")).events.map((e) => e.type)).toEqual(["invoice.created", "product.created"]);
    expect((await all.get("/events?types=client.flew")).body.error).toMatchObject({ code: 400001, details: [{ path: "types" }] });
    expect((await all.get(`/events?types=${Array(21).fill("client.created").join(",")}`)).body.error.code).toBe(400001);
    expect((await all.get("/events?types=")).body.error.code).toBe(400001);
    const clientsOnly = h.caller({ businessId, permissions: ["clients.read"] });
    expect((await readAll(clientsOnly)).events.map((e) => e.type)).toEqual(["client.created"]);
    expect((await clientsOnly.get("/events?types=invoice.*")).body.error.code).toBe(401014);
    expect((await h.caller({ businessId, permissions: ["webhooks.read"] }).get("/events")).body.error.code).toBe(401014);
    expect((await all.get("/events?perPage=0")).body.error).toMatchObject({ code: 400001, details: [{ path: "perPage" }] });
    expect((await all.get("/events?perPage=101")).body.error.code).toBe(400001);
    expect((await all.get("/events?wait=31")).body.error).toMatchObject({ code: 400001, details: [{ path: "wait" }] });
    expect((await all.get("/events?since=1")).body.error.code).toBe(400001);
  });

  it("keeps only the fields named in each event's data (extensions §E8), strictly", async () => {
    const caller = h.caller();
    const id = await createClient(caller, { email: "ada@example.test" });
    await caller.patch(`/client/${id}`, { lastName: "Byron" });
    await settled(caller, 2);
    const res = await caller.get("/events?fields=email,lastName");
    expect(res.body.data.map((e: EventEnvelope) => e.data)).toEqual([
      { id, lastName: "Lovelace", email: "ada@example.test" },
      { id, lastName: "Byron", email: "ada@example.test" },
    ]);
    expect(res.body.data[1].previousAttributes).toEqual({ lastName: "Lovelace" });
    // A field of invoices only is known when invoice events may be in the answer, not otherwise.
    expect((await caller.get("/events?fields=dueDate")).status).toBe(200);
    expect((await caller.get("/events?types=client.*&fields=dueDate")).body.error).toMatchObject({ code: 400019, details: [{ path: "fields" }] });
    expect((await caller.get("/events?fields=nope")).body.error).toMatchObject({ code: 400019, details: [{ path: "fields" }] });
    expect((await caller.get("/events?fields=contacts.email")).body.error.code).toBe(400019);
    expect((await caller.get("/events?fields=")).body.error.code).toBe(400019);
  });

  it("keeps only the custom keys named as customFields.<key> (extensions §E8 with §E4); an unknown or archived key is 400019", async () => {
    const caller = h.caller({ permissions: allPermissions });
    for (const body of [
      { key: "tier", label: "Tier", type: "text" },
      { key: "size", label: "Size", type: "integer" },
      { key: "old", label: "Old", type: "text" },
    ]) {
      await caller.post("/client/fields", body).expect(201);
    }
    await caller.post("/invoice/fields", { key: "po", label: "PO", type: "text" }).expect(201);
    const id = await createClient(caller, { customFields: { tier: "gold", size: 3, old: "x" } });
    await caller.delete("/client/fields/old").expect(200);
    await settled(caller, 1);
    const res = await caller.get("/events?fields=lastName,customFields.size");
    expect(res.status).toBe(200);
    expect(res.body.data.map((e: EventEnvelope) => e.data)).toEqual([{ id, lastName: "Lovelace", customFields: { size: 3 } }]);
    // A key of invoices only is known when invoice events may be in the answer, not otherwise.
    expect((await caller.get("/events?fields=customFields.po")).body.data.map((e: EventEnvelope) => e.data)).toEqual([{ id, customFields: {} }]);
    for (const fields of ["customFields.old", "customFields.nope", "customFields", "customFields.", "customFields.size.x"]) {
      const refused = await caller.get(`/events?fields=${fields}`);
      expect([fields, refused.status, refused.body.error?.code, refused.body.error?.details?.[0]?.path]).toEqual([fields, 400, 400019, "fields"]);
    }
    const clientsOnly = await caller.get("/events?types=client.*&fields=customFields.po");
    expect([clientsOnly.status, clientsOnly.body.error?.code]).toEqual([400, 400019]);
    // Another business's definitions name nothing here.
    const other = h.caller();
    await createClient(other);
    await settled(other, 1);
    expect((await other.get("/events?fields=customFields.size")).body.error).toMatchObject({ code: 400019, details: [{ path: "fields" }] });
  });

  it("refuses a cursor it did not make or made for another business (400019), and one past retention (410000)", async () => {
    const caller = h.caller();
    await createClient(caller);
    await settled(caller, 1);
    const { cursor } = await readAll(caller);
    expect((await caller.get("/events?after=not-a-cursor")).body.error.code).toBe(400019);
    expect((await caller.get(`/events?after=${cursor.slice(0, -2)}AA`)).body.error.code).toBe(400019);
    expect((await h.caller().get(`/events?after=${cursor}`)).body.error.code).toBe(400019);
    // Retention deleted events beyond the cursor: they may have been missed.
    await h.prisma.feedHorizon.create({ data: { businessId: caller.businessId, position: 1n << 40n } });
    const gone = await caller.get(`/events?after=${cursor}`);
    expect([gone.status, gone.body.error]).toEqual([410, { code: 410000, message: "Cursor expired" }]);
    // Without a cursor the feed starts at what is kept.
    expect((await caller.get("/events")).status).toBe(200);
  });

  it("waits for the next event without polling, and answers [] when the time ends", async () => {
    const caller = h.caller();
    await createClient(caller);
    await settled(caller, 1);
    const { cursor } = await readAll(caller);
    const started = Date.now();
    const empty = await caller.get(`/events?after=${cursor}&wait=0.3`);
    expect(empty.body.data).toEqual([]);
    expect(Date.now() - started).toBeGreaterThanOrEqual(290);

    const waiting = caller.get(`/events?after=${cursor}&wait=20`).then((res) => ({ res, at: Date.now() }));
    for (let i = 0; i < 100 && waiters.size === 0; i++) await new Promise((resolve) => setTimeout(resolve, 10));
    const wroteAt = Date.now();
    await createClient(caller, { firstName: "Awaited" });
    const { res, at } = await waiting;
    expect(res.body.data.map((e: EventEnvelope) => (e.data as { firstName: string }).firstName)).toEqual(["Awaited"]);
    expect(at - wroteAt).toBeLessThan(5_000);
  });

  it("while writers race, a reader following the feed sees every event exactly once, in the relay's order", async () => {
    const caller = h.caller({ permissions: allRecordPermissions });
    let writing = true;
    const seen: EventEnvelope[] = [];
    const reader = (async () => {
      let cursor: string | undefined;
      for (let round = 0; round < 2_000; round++) {
        const res = await caller.get(`/events?perPage=5${cursor ? `&after=${cursor}` : ""}`);
        seen.push(...res.body.data);
        cursor = res.body.meta.nextCursor;
        if (!writing && !res.body.meta.hasMore && seen.length >= 60) return;
      }
    })();
    await Promise.all(
      Array.from({ length: 4 }, async (_, w) => {
        for (let i = 0; i < 15; i++) await createClient(caller, { firstName: `W${w}-${i}` });
      }),
    );
    writing = false;
    await reader;
    const ids = seen.map((e) => e.id);
    expect(new Set(ids).size).toBe(60);
    expect(ids).toHaveLength(60);
    expect(ids).toEqual(published.filter((e) => e.businessId === caller.businessId).map((e) => e.id));
  });
});
