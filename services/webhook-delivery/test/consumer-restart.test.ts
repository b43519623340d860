// The consumer stopped and started again mid-stream, with events re-delivered (the bus is at least
// once): no event lost, no duplicate delivery record, each event delivered once.
import { uuidv7, type EventEnvelope } from "@crm/contracts";
import { waitFor } from "@crm/testing";
import type { WebhookDeliveryService } from "../src";
import {
  api,
  inProcessBus,
  preferredMode,
  principal,
  publish,
  recordEvent,
  sleep,
  startReceiver,
  startService,
  testDatabase,
  type Receiver,
  type TestDatabase,
} from "./support/harness";

function eventIdsReceived(receiver: Receiver, business: string): string[] {
  return receiver.requests
    .map((r) => JSON.parse(r.rawBody))
    .filter((b) => b.businessId === business)
    .map((b) => b.data.n as string);
}

describe(`consumer restart with the in-process bus on ${preferredMode}`, () => {
  jest.setTimeout(30_000);
  let db: TestDatabase;
  let receiver: Receiver;
  const services: WebhookDeliveryService[] = [];
  const bus = inProcessBus();

  beforeAll(async () => {
    db = await testDatabase(preferredMode);
    receiver = await startReceiver();
  });
  afterAll(async () => {
    for (const s of services) await s.stop();
    await receiver?.close();
    await db?.drop();
  });

  it("loses nothing and duplicates nothing", async () => {
    const first = await startService(db);
    services.push(first);
    const business = uuidv7();
    const hook = (
      await api(first, principal(business))
        .post("/api/v1/webhook", { url: receiver.url, events: ["employee.created"] })
        .expect(201)
    ).body.data;
    const events = Array.from({ length: 20 }, (_, n) => recordEvent(business, "employee.created", { n: String(n) }));

    // A relay-like producer: keeps each event until the bus accepts it (no consumer -> publish fails).
    const sendAll = async (batch: EventEnvelope[]) => {
      for (const event of batch) {
        while (true) {
          try {
            await publish(bus, [event]);
            break;
          } catch {
            await sleep(20);
          }
        }
      }
    };
    const producing = sendAll(events);
    await waitFor(() => eventIdsReceived(receiver, business).length >= 6, 10_000, 5);
    await first.stop(); // mid-stream
    const second = await startService(db);
    services.push(second);
    await producing;
    // Re-delivery of events the first consumer already handled.
    await sendAll(events.slice(0, 8));

    await waitFor(async () => (await second.prisma.delivery.count({ where: { webhookId: hook.id, status: "SUCCESS" } })) === 20, 10_000, 50);
    await sleep(200);
    expect(await second.prisma.delivery.count({ where: { webhookId: hook.id } })).toBe(20);
    expect(eventIdsReceived(receiver, business).sort()).toEqual(events.map((e) => String(e.data.n)).sort());
  });
});
