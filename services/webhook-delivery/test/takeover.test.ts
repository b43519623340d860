// First attempts are durable before they are sent; an instance claims only what it has room for.
// Whatever it leaves (its overflow, or everything when it stops) is taken by any other instance with
// room within a poll interval, not at the next retry cycle, and no attempt is ever sent twice.
import { uuidv7 } from "@crm/contracts";
import { waitFor } from "@crm/testing";
import { api, inProcessBus, preferredMode, principal, publish, recordEvent, setUpDelivery } from "./support/harness";

const WEBHOOKS = 20;
// The retry cycle claims one record per ten minutes: only the takeover can deliver the rest in time.
const SLOW_CYCLE = { WEBHOOK_RETRY_INTERVAL_MS: "600000", WEBHOOK_RETRY_BATCH_SIZE: "1" };

describe(`first attempts taken over by another instance on ${preferredMode}`, () => {
  jest.setTimeout(120_000);
  const setup = setUpDelivery(preferredMode, { service: false });
  const bus = inProcessBus();

  it("delivers what a stopped instance left, each delivery once", async () => {
    // One attempt in flight per business at most: the consumer claims two, the rest stays due.
    const first = await setup.start({ ...SLOW_CYCLE, WEBHOOK_MAX_IN_FLIGHT_PER_BUSINESS: "1" });
    const business = uuidv7();
    for (let i = 0; i < WEBHOOKS; i++) {
      await api(first, principal(business))
        .post("/api/v1/webhook", { url: `${setup.receiver.url}?n=${i}`, events: ["invoice.created"] })
        .expect(201);
    }
    setup.receiver.behaviour = { kind: "hang" };
    await publish(bus, [recordEvent(business, "invoice.created")]);
    await waitFor(() => setup.receiver.requests.length >= 1, 10_000, 10);
    // Its in-flight attempt is cut short by the stop (time-out), its queued claims are given back.
    const stopping = first.stop();
    setup.receiver.behaviour = { kind: "status", status: 200 };
    await stopping;

    const second = await setup.start(SLOW_CYCLE);
    await waitFor(async () => (await second.prisma.delivery.count({ where: { businessId: business, attempt: { gte: 1 } } })) === WEBHOOKS, 45_000, 50);
    await waitFor(async () => (await second.prisma.delivery.count({ where: { businessId: business, status: "SUCCESS" } })) >= WEBHOOKS - 1, 45_000, 50);

    // Each delivery's first attempt was sent exactly once (the one cut short may have been retried later).
    const attempts = await second.prisma.deliveryAttempt.findMany({ where: { delivery: { businessId: business } } });
    const perDeliveryAndAttempt = new Map<string, number>();
    for (const a of attempts) perDeliveryAndAttempt.set(`${a.deliveryId}#${a.attempt}`, (perDeliveryAndAttempt.get(`${a.deliveryId}#${a.attempt}`) ?? 0) + 1);
    expect([...perDeliveryAndAttempt.values()].every((n) => n === 1)).toBe(true);
    const sentIds = setup.receiver.requests.map((r) => r.headers["x-service-delivery-id"] as string);
    const deliveries = await second.prisma.delivery.findMany({ where: { businessId: business } });
    expect(new Set(sentIds)).toEqual(new Set(deliveries.map((d) => d.id)));
    expect(sentIds.length).toBe(WEBHOOKS);
  });
});
