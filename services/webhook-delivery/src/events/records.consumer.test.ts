// The records consumer in front of a recording repository: events of businesses without a subscriber
// cost one small lookup and nothing else (no payload, no create statement), and the events that do
// have one reach createForEvents (and a filtered subscriber's createForEvent) as before.
import { uuidv7, type EventEnvelope } from "@crm/contracts";
import type { BusEvent } from "@crm/event-bus";
import { createLogger } from "@crm/logger";
import type { DeliveryScheduler } from "../scheduler/delivery-scheduler";
import type { CreatedForEvents, DeliveryRepository, NewEvent, NewEventDeliveries } from "../persistence/delivery.repository";
import { createRecordsConsumer } from "./records.consumer";

const logger = createLogger({ service: "test", level: "silent" });

function busEvent(businessId: string, type: string, data: Record<string, unknown> = {}): BusEvent {
  const event: EventEnvelope = { id: uuidv7(), type, businessId, occurredAt: new Date().toISOString(), version: 1, data };
  return { event, context: { headers: {} } };
}

/**
 * A repository whose subscribers are `subscriptions` (business -> types, and the filter of each),
 * recording the statements the consumer asks for.
 */
function recordingRepository(subscriptions: Map<string, Array<{ type: string; webhookId: string; filter?: string }>>) {
  const calls = {
    subscribed: [] as Array<Array<{ businessId: string; event: string }>>,
    createForEvents: [] as NewEvent[][],
    createForEvent: [] as NewEventDeliveries[],
  };
  const repository = {
    subscribed: async (events: ReadonlyArray<{ businessId: string; event: string }>) => {
      calls.subscribed.push(events.map(({ businessId, event }) => ({ businessId, event })));
      return new Set(events.flatMap((e, i) => ((subscriptions.get(e.businessId) ?? []).some((s) => s.type === e.event) ? [i] : [])));
    },
    createForEvents: async (events: readonly NewEvent[]): Promise<CreatedForEvents> => {
      calls.createForEvents.push([...events]);
      const created: CreatedForEvents = { claims: [], due: new Map(), filtered: [] };
      events.forEach((e, index) => {
        for (const s of subscriptions.get(e.businessId) ?? []) {
          if (s.type !== e.event) continue;
          if (s.filter) created.filtered.push({ index, webhookId: s.webhookId, filter: s.filter });
          else created.due.set(e.businessId, (created.due.get(e.businessId) ?? 0) + 1);
        }
      });
      return created;
    },
    createForEvent: async (input: NewEventDeliveries) => {
      calls.createForEvent.push(input);
      return [];
    },
  };
  return { calls, deliveries: repository as unknown as DeliveryRepository };
}

/** A scheduler that runs the create callback at once with no room (every record created due). */
const scheduler = {
  sendNew: async (businessIds: Iterable<string>, create: (lease: { leaseUntil: Date; limits: ReadonlyMap<string, number> }) => Promise<unknown>) => {
    await create({ leaseUntil: new Date(Date.now() + 60_000), limits: new Map([...businessIds].map((b) => [b, 0])) });
  },
  run: () => [],
} as unknown as DeliveryScheduler;

// Both ways: WEBHOOK_CONSUMER_LOOKUP_FIRST=false sends every batch to createForEvents alone (docs/performance.md D27).
describe.each([true, false])("createRecordsConsumer (WEBHOOK_CONSUMER_LOOKUP_FIRST=%s)", (lookupFirst) => {
  it("builds no payload and sends no create statement for events no webhook is subscribed to (switched off: the create statement only)", async () => {
    const a = uuidv7();
    const b = uuidv7();
    const { calls, deliveries } = recordingRepository(new Map());
    const handle = createRecordsConsumer({ deliveries, scheduler, logger, lookupFirst });
    const batch = [busEvent(a, "client.created"), busEvent(b, "client.created"), busEvent(a, "client.created"), busEvent(a, "client.updated")];

    await handle(batch);

    // One lookup per business and type.
    expect(calls.subscribed).toEqual(
      lookupFirst
        ? [
            [
              { businessId: a, event: "client.created" },
              { businessId: b, event: "client.created" },
              { businessId: a, event: "client.updated" },
            ],
          ]
        : [],
    );
    expect(calls.createForEvents.map((events) => events.map((e) => e.eventId))).toEqual(lookupFirst ? [] : [batch.map(({ event }) => event.id)]);
    expect(calls.createForEvent).toEqual([]);
  });

  it("passes on only the subscribed events (switched off: all), a filtered subscriber's index pointing at its own event", async () => {
    const a = uuidv7();
    const b = uuidv7();
    const c = uuidv7();
    const { calls, deliveries } = recordingRepository(
      new Map([
        [a, [{ type: "client.created", webhookId: "wa" }]],
        [c, [{ type: "invoice.created", webhookId: "wc", filter: "totalAmount:gt:100" }]],
      ]),
    );
    const handle = createRecordsConsumer({ deliveries, scheduler, logger, lookupFirst });
    const batch = [
      busEvent(b, "client.created"),
      busEvent(a, "client.created"),
      busEvent(c, "invoice.created", { totalAmount: 50 }),
      busEvent(c, "invoice.created", { totalAmount: 150 }),
    ];

    await handle(batch);

    expect(calls.createForEvents).toHaveLength(1);
    expect(calls.createForEvents[0]!.map((e) => e.eventId)).toEqual(batch.slice(lookupFirst ? 1 : 0).map(({ event }) => event.id));
    expect(JSON.parse(calls.createForEvents[0]!.find((e) => e.eventId === batch[1]!.event.id)!.payload)).toMatchObject({ event: "client.created", businessId: a });
    // Only the event whose data the filter lets through gets its record.
    expect(calls.createForEvent.map((e) => [e.eventId, e.webhookIds])).toEqual([[batch[3]!.event.id, ["wc"]]]);
  });

  it("looks up first only the businesses it has not found subscribers for, and again once one got nothing (switched off: never)", async () => {
    const a = uuidv7();
    const b = uuidv7();
    const subscriptions = new Map([[a, [{ type: "client.created", webhookId: "wa" }]]]);
    const { calls, deliveries } = recordingRepository(subscriptions);
    const handle = createRecordsConsumer({ deliveries, scheduler, logger, lookupFirst });
    const lookups = (count: number) => (lookupFirst ? count : 0);

    await handle([busEvent(a, "client.created")]);
    expect(calls.subscribed).toHaveLength(lookups(1));
    // a had a subscriber: its next events go straight to the one statement.
    await handle([busEvent(a, "client.created"), busEvent(a, "client.created")]);
    expect(calls.subscribed).toHaveLength(lookups(1));
    expect(calls.createForEvents.map((events) => events.length)).toEqual([1, 2]);
    // A business not seen yet in the batch: looked up first.
    await handle([busEvent(a, "client.created"), busEvent(b, "client.created")]);
    expect(calls.subscribed).toHaveLength(lookups(2));
    expect(calls.createForEvents.map((events) => events.length)).toEqual([1, 2, lookupFirst ? 1 : 2]);
    // a's webhook is gone: the one statement creates nothing, so a is looked up first next time.
    subscriptions.delete(a);
    await handle([busEvent(a, "client.created")]);
    expect(calls.createForEvents.map((events) => events.length)).toEqual([1, 2, lookupFirst ? 1 : 2, 1]);
    await handle([busEvent(a, "client.created")]);
    expect(calls.subscribed).toHaveLength(lookups(3));
    expect(calls.createForEvents).toHaveLength(lookupFirst ? 4 : 5);
  });
});
