// Issue 15's fairness scenario on a small scale: business A has many webhooks pointing at an endpoint
// that accepts connections and never answers; business B's deliveries to a healthy endpoint must not
// wait behind A's. Before per-business limits, A's attempts held every slot for a whole time-out.
import { uuidv7 } from "@crm/contracts";
import { waitFor } from "@crm/testing";
import type { WebhookDeliveryService } from "../src";
import { api, inProcessBus, preferredMode, principal, publish, recordEvent, startReceiver, startService, testDatabase, type Receiver, type TestDatabase } from "./support/harness";

const A_WEBHOOKS = 60;
const TIMEOUT_MS = 4_000;

describe(`fairness between businesses on ${preferredMode}`, () => {
  jest.setTimeout(60_000);
  let db: TestDatabase;
  let hanging: Receiver;
  let healthy: Receiver;
  let service: WebhookDeliveryService;
  const bus = inProcessBus();

  beforeAll(async () => {
    db = await testDatabase(preferredMode);
    hanging = await startReceiver({ kind: "hang" });
    healthy = await startReceiver();
    service = await startService(db, { WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS), WEBHOOK_MAX_IN_FLIGHT: "25", WEBHOOK_MAX_IN_FLIGHT_PER_BUSINESS: "20" });
  });
  afterAll(async () => {
    await service?.stop();
    await hanging?.close();
    await healthy?.close();
    await db?.drop();
  });

  it("delivers B's events while A's many webhooks hang, and still attempts every one of A's", async () => {
    const a = uuidv7();
    const b = uuidv7();
    for (let i = 0; i < A_WEBHOOKS; i++) {
      await api(service, principal(a))
        .post("/api/v1/webhook", { url: `${hanging.url}?n=${i}`, events: ["client.created"] })
        .expect(201);
    }
    for (let i = 0; i < 5; i++) {
      await api(service, principal(b))
        .post("/api/v1/webhook", { url: `${healthy.url}?n=${i}`, events: ["client.created"] })
        .expect(201);
    }

    await publish(bus, [recordEvent(a, "client.created")]);
    // A's attempts are under way (they hang) before B writes anything.
    await waitFor(() => hanging.requests.length >= 10, 10_000, 10);

    const written = Date.now();
    await publish(bus, [recordEvent(b, "client.created")]);
    await waitFor(() => healthy.requests.length >= 5, 10_000, 10);
    // Generous: on an idle machine this is milliseconds; without per-business limits B waited for
    // A's attempts to time out (TIMEOUT_MS) first.
    expect(Date.now() - written).toBeLessThan(TIMEOUT_MS - 1_000);
    await waitFor(async () => (await service.prisma.delivery.count({ where: { businessId: b, status: "SUCCESS" } })) === 5, 10_000, 20);

    // A's first attempts held back for want of room are claimed as its slots free: every one is made.
    await waitFor(async () => (await service.prisma.delivery.count({ where: { businessId: a, attempt: 1 } })) === A_WEBHOOKS, 40_000, 200);
    expect(await service.prisma.delivery.count({ where: { businessId: a, status: "RETRYING", attempt: 1 } })).toBe(A_WEBHOOKS);
  });
});
