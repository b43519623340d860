// Issue 35 item 8: a recovery re-sends within its business's share of the delivery workers, as its first
// attempts do. Business A recovers hundreds of failed deliveries to an endpoint that never answers;
// business B's new events must not wait behind them, and A never holds more than its per-business bound
// of this process's claims. Before, recovered deliveries were claimed around that bound (by the
// recovery itself and by the retry cycle, which knows no business) until they held every claim.
import { uuidv7 } from "@crm/contracts";
import { waitFor } from "@crm/testing";
import type { WebhookDeliveryService } from "../src";
import { api, inProcessBus, preferredMode, principal, publish, recordEvent, startReceiver, startService, testDatabase, type Receiver, type TestDatabase } from "./support/harness";

const A_WEBHOOKS = 5;
const FAILED_PER_WEBHOOK = 60;
const TIMEOUT_MS = 4_000;
const IN_FLIGHT = 25;
const IN_FLIGHT_PER_BUSINESS = 10;
/** Claims one business may hold in one process (start.ts: twice its in-flight bound). */
const PENDING_PER_BUSINESS = 2 * IN_FLIGHT_PER_BUSINESS;

describe(`recovered deliveries and fairness between businesses on ${preferredMode}`, () => {
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
    service = await startService(db, {
      WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS),
      WEBHOOK_MAX_IN_FLIGHT: String(IN_FLIGHT),
      WEBHOOK_MAX_IN_FLIGHT_PER_BUSINESS: String(IN_FLIGHT_PER_BUSINESS),
      // A retry cycle as eager as it gets: it must still not take recovered deliveries around the bound.
      WEBHOOK_RETRY_INTERVAL_MS: "20",
    });
  });
  afterAll(async () => {
    await service?.stop();
    await hanging?.close();
    await healthy?.close();
    await db?.drop();
  });

  /** `count` FAILED deliveries of the webhook, created an hour ago. */
  async function seedFailed(webhookId: string, businessId: string, count: number): Promise<void> {
    const tag = uuidv7();
    await service.prisma.$executeRawUnsafe(
      `INSERT INTO webhooks."Payload" (id, "eventId", body, "createdAt")
       SELECT gen_random_uuid(), $1 || '-' || n, '{}', now() - interval '1 hour' FROM generate_series(1, $2::int) AS n`,
      tag,
      count,
    );
    await service.prisma.$executeRawUnsafe(
      `INSERT INTO webhooks."Delivery" (id, "webhookId", "businessId", "eventId", event, "payloadId", status, attempt, "createdAt", "updatedAt")
       SELECT gen_random_uuid(), $2::uuid, $3, p."eventId", 'client.created', p.id, 'FAILED', 3, p."createdAt", p."createdAt"
       FROM webhooks."Payload" AS p WHERE p."eventId" LIKE $1 || '-%'`,
      tag,
      webhookId,
      businessId,
    );
  }

  it("delivers B's events at once while A's recovered deliveries hang, and A holds no more claims than its bound", async () => {
    const a = uuidv7();
    const b = uuidv7();
    const since = new Date(Date.now() - 2 * 3_600_000).toISOString();
    const hooks: string[] = [];
    for (let i = 0; i < A_WEBHOOKS; i++) {
      const hook = (
        await api(service, principal(a))
          .post("/api/v1/webhook", { url: `${hanging.url}?n=${i}`, events: ["client.created"] })
          .expect(201)
      ).body.data;
      await seedFailed(hook.id, a, FAILED_PER_WEBHOOK);
      hooks.push(hook.id);
    }
    for (let i = 0; i < 5; i++) {
      await api(service, principal(b))
        .post("/api/v1/webhook", { url: `${healthy.url}?n=${i}`, events: ["client.created"] })
        .expect(201);
    }

    let busiest = 0;
    const sampler = setInterval(() => {
      busiest = Math.max(busiest, service.scheduler.load().busiestBusiness);
    }, 5);
    try {
      for (const id of hooks) {
        const res = await api(service, principal(a)).post(`/api/v1/webhook/${id}/recover`, { since }).expect(202);
        expect(res.body.data).toEqual({ recovered: FAILED_PER_WEBHOOK, remaining: 0 });
      }
      // A's recovered attempts are under way (they hang; two at a time per webhook) and A holds all the
      // claims it may, and several retry cycles have run, before B writes anything.
      await waitFor(() => hanging.requests.length >= 2 && service.scheduler.load().busiestBusiness >= PENDING_PER_BUSINESS, 10_000, 10);
      await new Promise((resolve) => setTimeout(resolve, 200));

      const written = Date.now();
      await publish(bus, [recordEvent(b, "client.created")]);
      await waitFor(() => healthy.requests.length >= 5, 10_000, 10);
      // Generous: on an idle machine this is milliseconds; before, B waited for A's attempts to time out.
      expect(Date.now() - written).toBeLessThan(TIMEOUT_MS - 1_000);
      await waitFor(async () => (await service.prisma.delivery.count({ where: { businessId: b, status: "SUCCESS" } })) === 5, 10_000, 20);
    } finally {
      clearInterval(sampler);
    }
    expect(busiest).toBeGreaterThan(0);
    expect(busiest).toBeLessThanOrEqual(PENDING_PER_BUSINESS);
    // None of A's was lost: waiting for a claim (PENDING), or attempted and waiting for its outcome.
    expect(await service.prisma.delivery.count({ where: { businessId: a, status: "FAILED", attempt: 3 } })).toBe(0);
  });
});
