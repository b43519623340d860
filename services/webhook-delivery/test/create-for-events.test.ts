// DeliveryRepository.createForEvents: the records of several consumed events and their subscriber
// lookup in one statement (the consumer's path for every fetch of events). Which webhooks get a
// record, which are left to the caller's filter, the lease of the first records of each business,
// idempotence on the event id, and one payload per event only when a record needs it.
import { uuidv7 } from "@crm/contracts";
import type { NewEvent } from "../src/persistence/delivery.repository";
import { api, databaseModes, principal, setUpDelivery } from "./support/harness";

const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe.each(databaseModes)("createForEvents on %s", (mode) => {
  const setup = setUpDelivery(mode);

  async function webhook(businessId: string, body: Record<string, unknown>): Promise<string> {
    return (
      await api(setup.service, principal(businessId))
        .post("/api/v1/webhook", { url: setup.receiver.url, ...body })
        .expect(201)
    ).body.data.id;
  }

  function newEvent(businessId: string, type = "client.created"): NewEvent {
    return { eventId: uuidv7(), businessId, event: type, payload: JSON.stringify({ event: type, n: Math.random() }) };
  }

  const later = (now: Date) => new Date(now.getTime() + 60_000);

  it("creates a record per active, subscribed webhook without a filter, and hands the filtered ones back unread", async () => {
    const a = uuidv7();
    const b = uuidv7();
    const plain = await webhook(a, { events: ["client.created", "client.updated"] });
    const filtered = await webhook(a, { events: ["client.created"], filter: "firstName:eq:Ada" });
    await webhook(a, { events: ["invoice.created"] });
    const inactive = await webhook(a, { events: ["client.created"] });
    await api(setup.service, principal(a)).put(`/api/v1/webhook/${inactive}`, { isActive: false }).expect(200);
    const other = await webhook(b, { events: ["client.created"] });
    const events = [newEvent(a), newEvent(b), newEvent(a, "client.updated")];
    // An hour ahead: the running instance's poller claims due first attempts every 250 ms, and leased
    // b's record (due at `now`) before it was read in one run of 1,840 (PGlite on its own thread).
    const now = new Date(Date.now() + 3_600_000);

    const created = await setup.service.deliveries.createForEvents(events, now, { leaseUntil: later(now), limits: new Map([[a, 10]]) });

    expect(created.claims.map((c) => [c.eventId, c.webhookId])).toEqual([
      [events[0]!.eventId, plain],
      [events[2]!.eventId, plain],
    ]);
    expect(created.claims[0]).toMatchObject({
      businessId: a,
      attempt: 0,
      leaseUntil: later(now),
      read: { send: { payload: events[0]!.payload, url: setup.receiver.url, webhookActive: true } },
    });
    expect(created.claims.every((c) => UUID_V7.test(c.id) && c.id.slice(0, 8) === now.getTime().toString(16).padStart(12, "0").slice(0, 8))).toBe(true);
    // b has no room given: its record is created due at once, for whoever has room.
    expect(created.due).toEqual(new Map([[b, 1]]));
    expect(created.filtered).toEqual([{ index: 0, webhookId: filtered, filter: "firstName:eq:Ada" }]);
    const rows = await setup.service.prisma.delivery.findMany({ where: { eventId: { in: events.map((e) => e.eventId) } } });
    expect(rows.map((r) => r.webhookId).sort()).toEqual([plain, plain, other].sort());
    expect(rows.find((r) => r.webhookId === other)).toMatchObject({ status: "PENDING", attempt: 0, nextRetryAt: now });
  });

  it("leases the first records of each business up to its limit, in event order, the rest due", async () => {
    const a = uuidv7();
    const hooks = [await webhook(a, { events: ["client.created"] }), await webhook(a, { events: ["client.created"] })];
    const events = [newEvent(a), newEvent(a)];
    const now = new Date();

    const created = await setup.service.deliveries.createForEvents(events, now, { leaseUntil: later(now), limits: new Map([[a, 3]]) });

    expect(created.claims).toHaveLength(3);
    expect(created.claims.map((c) => c.eventId)).toEqual([events[0]!.eventId, events[0]!.eventId, events[1]!.eventId]);
    expect(new Set(created.claims.slice(0, 2).map((c) => c.webhookId))).toEqual(new Set(hooks));
    expect(created.due).toEqual(new Map([[a, 1]]));
    const leased = await setup.service.prisma.delivery.count({ where: { businessId: a, nextRetryAt: later(now) } });
    expect(leased).toBe(3);
  });

  it("creates nothing twice for an event delivered again, in the same batch or later, and stores its payload once", async () => {
    const a = uuidv7();
    await webhook(a, { events: ["client.created"] });
    const event = newEvent(a);
    const now = new Date();
    const lease = { leaseUntil: later(now), limits: new Map([[a, 5]]) };

    const first = await setup.service.deliveries.createForEvents([event, event], now, lease);
    const again = await setup.service.deliveries.createForEvents([event], now, lease);

    expect(first.claims).toHaveLength(1);
    expect(again).toEqual({ claims: [], due: new Map(), filtered: [] });
    expect(await setup.service.prisma.delivery.count({ where: { eventId: event.eventId } })).toBe(1);
    expect(await setup.service.prisma.payload.count({ where: { eventId: event.eventId } })).toBe(1);
  });

  it("gives an event delivered again, beside a new one, only the records it lacks", async () => {
    const a = uuidv7();
    const before = await webhook(a, { events: ["client.created"] });
    const seen = newEvent(a);
    const now = new Date();
    const lease = { leaseUntil: later(now), limits: new Map([[a, 5]]) };
    await setup.service.deliveries.createForEvents([seen], now, lease);
    const since = await webhook(a, { events: ["client.created"] });
    const fresh = newEvent(a);

    // The new event's payload is inserted by this statement; the seen event's is found again.
    const created = await setup.service.deliveries.createForEvents([seen, fresh], now, lease);

    expect(created.claims.map((c) => `${c.eventId} ${c.webhookId}`).sort()).toEqual([`${seen.eventId} ${since}`, `${fresh.eventId} ${before}`, `${fresh.eventId} ${since}`].sort());
    expect(created.claims[0]!.eventId).toBe(seen.eventId);
    const rows = await setup.service.prisma.delivery.findMany({ where: { eventId: { in: [seen.eventId, fresh.eventId] } } });
    expect(rows.map((r) => `${r.eventId} ${r.webhookId}`).sort()).toEqual(
      [`${seen.eventId} ${before}`, `${seen.eventId} ${since}`, `${fresh.eventId} ${before}`, `${fresh.eventId} ${since}`].sort(),
    );
    expect(await setup.service.prisma.payload.count({ where: { eventId: { in: [seen.eventId, fresh.eventId] } } })).toBe(2);
    expect(created.claims.every((c) => c.read?.send.payload === (c.eventId === seen.eventId ? seen.payload : fresh.payload))).toBe(true);
  });

  it("stores no payload for an event no webhook without a filter receives", async () => {
    const a = uuidv7();
    await webhook(a, { events: ["client.created"], filter: "firstName:eq:Ada" });
    const events = [newEvent(a), newEvent(uuidv7())];
    const now = new Date();

    const created = await setup.service.deliveries.createForEvents(events, now, { leaseUntil: later(now), limits: new Map() });

    expect(created.claims).toEqual([]);
    expect(created.filtered).toHaveLength(1);
    expect(await setup.service.prisma.payload.count({ where: { eventId: { in: events.map((e) => e.eventId) } } })).toBe(0);
  });
});
