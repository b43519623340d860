// Several instances on one PostgreSQL database share the retry work without ever sending the same
// attempt twice (decisions §6): claims use FOR UPDATE SKIP LOCKED plus a lease checked on every write.
import { uuidv7 } from "@crm/contracts";
import { describePostgres, waitFor } from "@crm/testing";
import type { WebhookDeliveryService } from "../src";
import { api, inProcessBus, principal, publish, recordEvent, settled, setUpDelivery } from "./support/harness";

// Both ways: WEBHOOK_LEASE_ON_CREATE=false creates first attempts due, for the claims (docs/performance.md D19).
describePostgres.each([true, false])("two service instances on one PostgreSQL database (WEBHOOK_LEASE_ON_CREATE=%s)", (leaseOnCreate) => {
  jest.setTimeout(30_000);
  const setup = setUpDelivery("postgres", { service: false, receiver: { kind: "status", status: 500 } });
  let one: WebhookDeliveryService;
  let two: WebhookDeliveryService;
  const bus = inProcessBus();

  beforeAll(async () => {
    // WEBHOOK_TIMEOUT_MS: an attempt that times out before it reaches the receiver (a 2-core machine at
    // load 19 did so for 3 of 40 deliveries) is not what this test is about; claims are.
    const env = {
      WEBHOOK_RETRY_DELAYS_MS: "100,100",
      WEBHOOK_RETRY_INTERVAL_MS: "50",
      WEBHOOK_RETRY_BATCH_SIZE: "3",
      WEBHOOK_LEASE_ON_CREATE: String(leaseOnCreate),
      WEBHOOK_TIMEOUT_MS: "60000",
    };
    one = await setup.start(env);
    two = await setup.start(env);
  });

  /** Requests received per delivery, of this test's deliveries only: a late attempt of another test's counts nowhere. */
  function countPerDelivery(ours: (deliveryId: string, body: string) => boolean): Map<string, number> {
    const counts = new Map<string, number>();
    for (const r of setup.receiver.requests) {
      const id = String(r.headers["x-service-delivery-id"]);
      if (!ours(id, r.rawBody)) continue;
      counts.set(id, (counts.get(id) ?? 0) + 1);
    }
    return counts;
  }

  it("sends every attempt of every delivery exactly once", async () => {
    const business = uuidv7();
    const owner = api(one, principal(business));
    for (let i = 0; i < 8; i++) {
      await owner.post("/api/v1/webhook", { url: setup.receiver.url, events: ["quote.created"] }).expect(201);
    }
    // Both instances consume (one consumer group, handlers take turns) and both run retry cycles.
    await publish(
      bus,
      Array.from({ length: 5 }, () => recordEvent(business, "quote.created")),
    );
    const total = 8 * 5;
    await waitFor(async () => (await one.prisma.delivery.count({ where: { businessId: business, status: "FAILED" } })) === total, 25_000, 50);
    await settled(one, two);
    const counts = countPerDelivery((_, body) => JSON.parse(body).businessId === business);
    expect(counts.size).toBe(total);
    expect([...counts.values()].every((n) => n === 3)).toBe(true);
    expect(await one.prisma.deliveryAttempt.count({ where: { delivery: { businessId: business } } })).toBe(total * 3);
  });

  it("never lets two racing cycles claim the same due record", async () => {
    setup.receiver.behaviour = { kind: "status", status: 200 };
    setup.receiver.requests.length = 0;
    const business = uuidv7();
    const hook = (
      await api(one, principal(business))
        .post("/api/v1/webhook", { url: setup.receiver.url, events: ["quote.created"] })
        .expect(201)
    ).body.data;
    const due = new Date(Date.now() - 1000);
    const ids = Array.from({ length: 40 }, () => uuidv7());
    await one.prisma.payload.createMany({ data: ids.map((id, i) => ({ id, body: `{"n":${i}}` })) });
    await one.prisma.delivery.createMany({
      data: ids.map((id) => ({
        id,
        webhookId: hook.id,
        businessId: business,
        eventId: uuidv7(),
        event: "quote.created",
        payloadId: id,
        status: "RETRYING" as const,
        attempt: 1,
        nextRetryAt: due,
      })),
    });
    // Both instances' timers run, and we race extra cycles of both on top.
    await Promise.all(Array.from({ length: 10 }, (_, i) => (i % 2 ? one : two).retries.runOnce()));
    await waitFor(async () => (await one.prisma.delivery.count({ where: { id: { in: ids }, status: "SUCCESS" } })) === ids.length, 20_000, 50);
    const counts = countPerDelivery((id) => ids.includes(id));
    expect(counts.size).toBe(ids.length);
    expect([...counts.values()].every((n) => n === 1)).toBe(true);
    const rows = await one.prisma.delivery.findMany({ where: { id: { in: ids } } });
    expect(rows.every((r) => r.attempt === 2 && r.nextRetryAt === null)).toBe(true);
  });
});
