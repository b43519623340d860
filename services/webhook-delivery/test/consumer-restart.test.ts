// The consumer stopped and started again mid-stream, with events re-delivered (the bus is at least
// once): no event lost, no duplicate delivery record, each event delivered once.
import { uuidv7, type EventEnvelope } from "@crm/contracts";
import { waitFor } from "@crm/testing";
import { api, inProcessBus, preferredMode, principal, publish, recordEvent, sleep, type Receiver, setUpDelivery } from "./support/harness";

function eventIdsReceived(receiver: Receiver, business: string): string[] {
  return receiver.requests
    .map((r) => JSON.parse(r.rawBody))
    .filter((b) => b.businessId === business)
    .map((b) => b.data.n as string);
}

describe(`consumer restart with the in-process bus on ${preferredMode}`, () => {
  jest.setTimeout(30_000);
  const setup = setUpDelivery(preferredMode, { service: false });
  const bus = inProcessBus();

  it("loses nothing and duplicates nothing", async () => {
    const first = await setup.start();
    const business = uuidv7();
    const hook = (
      await api(first, principal(business))
        .post("/api/v1/webhook", { url: setup.receiver.url, events: ["employee.created"] })
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
    await waitFor(() => eventIdsReceived(setup.receiver, business).length >= 6, 10_000, 5);
    await first.stop(); // mid-stream
    const second = await setup.start();
    await producing;
    // Re-delivery of events the first consumer already handled.
    await sendAll(events.slice(0, 8));

    await waitFor(async () => (await second.prisma.delivery.count({ where: { webhookId: hook.id, status: "SUCCESS" } })) === 20, 10_000, 50);
    await sleep(200);
    expect(await second.prisma.delivery.count({ where: { webhookId: hook.id } })).toBe(20);
    expect(eventIdsReceived(setup.receiver, business).sort()).toEqual(events.map((e) => String(e.data.n)).sort());
  });
});
