// Retention (issue 16 item 10): deliveries in a final state and their attempts are deleted
// DELIVERY_RETENTION_MS after their last activity, in bounded batches, and then the payloads no delivery
// refers to any more; PENDING and RETRYING deliveries never; several instances delete each row once.
import { uuidv7 } from "@crm/contracts";
import { describePostgres, errorCollectingLogger } from "@crm/testing";
import type { WebhookDeliveryService } from "../src";
import type { DeliveryStatus } from "../src/generated/prisma/client";
import { api, databaseModes, principal, startService, testDatabase, type TestDatabase, setUpDelivery } from "./support/harness";

const DAY = 24 * 3_600_000;

async function seedPayload(service: WebhookDeliveryService, ageMs: number): Promise<string> {
  const id = uuidv7();
  await service.prisma.payload.create({ data: { id, eventId: uuidv7(), body: "{}", createdAt: new Date(Date.now() - ageMs) } });
  return id;
}

/** A delivery of `webhookId` in `status` whose last activity was `ageMs` ago, with `attempts` history rows. */
async function seedDelivery(
  service: WebhookDeliveryService,
  webhookId: string,
  businessId: string,
  status: DeliveryStatus,
  ageMs: number,
  attempts = 0,
  payloadId?: string,
): Promise<string> {
  const id = uuidv7();
  const at = new Date(Date.now() - ageMs);
  await service.prisma.delivery.create({
    data: {
      id,
      webhookId,
      businessId,
      event: "client.created",
      payloadId: payloadId ?? (await seedPayload(service, ageMs)),
      status,
      attempt: attempts,
      createdAt: at,
      nextRetryAt: status === "RETRYING" ? new Date(Date.now() + DAY) : null,
    },
  });
  for (let n = 1; n <= attempts; n++) {
    await service.prisma.deliveryAttempt.create({
      data: { deliveryId: id, attempt: n, manual: false, succeeded: status === "SUCCESS", responseStatus: 200, responseBody: "", durationMs: 1, createdAt: at },
    });
  }
  // Prisma's @updatedAt would write now; retention reads the real column.
  await service.prisma.$executeRaw`UPDATE "webhooks"."Delivery" SET "updatedAt" = ${at} WHERE id = ${id}::uuid`;
  return id;
}

async function newWebhook(service: WebhookDeliveryService, businessId = uuidv7()): Promise<{ id: string; businessId: string }> {
  const hook = (
    await api(service, principal(businessId))
      .post("/api/v1/webhook", { url: "https://example.com/hook", events: ["client.created"] })
      .expect(201)
  ).body.data;
  return { id: hook.id, businessId };
}

describe.each(databaseModes)("delivery retention on %s", (mode) => {
  jest.setTimeout(60_000);
  const setup = setUpDelivery(mode, { service: { DELIVERY_RETENTION_MS: String(30 * DAY), RETENTION_BATCH_SIZE: "2" }, receiver: false, timeoutMs: 180_000 });

  it("deletes final deliveries and their attempts after the window, keeps newer ones and never unfinished ones", async () => {
    const hook = await newWebhook(setup.service);
    const gone = [
      await seedDelivery(setup.service, hook.id, hook.businessId, "SUCCESS", 31 * DAY, 1),
      await seedDelivery(setup.service, hook.id, hook.businessId, "FAILED", 31 * DAY, 3),
      await seedDelivery(setup.service, hook.id, hook.businessId, "FAILED", 400 * DAY, 3),
    ];
    const kept = [
      await seedDelivery(setup.service, hook.id, hook.businessId, "SUCCESS", 29 * DAY, 1),
      await seedDelivery(setup.service, hook.id, hook.businessId, "FAILED", 29 * DAY, 3),
      await seedDelivery(setup.service, hook.id, hook.businessId, "PENDING", 400 * DAY),
      await seedDelivery(setup.service, hook.id, hook.businessId, "RETRYING", 400 * DAY, 1),
    ];

    // One event's payload shared by a delivery that goes and one (of another webhook: a delivery is
    // unique per payload and webhook) that stays: the payload stays.
    const other = await newWebhook(setup.service, hook.businessId);
    const shared = await seedPayload(setup.service, 40 * DAY);
    gone.push(await seedDelivery(setup.service, hook.id, hook.businessId, "SUCCESS", 40 * DAY, 1, shared));
    const keptOfOther = await seedDelivery(setup.service, other.id, other.businessId, "RETRYING", 40 * DAY, 1, shared);
    kept.push(keptOfOther);
    const keptPayloads = (await setup.service.prisma.delivery.findMany({ where: { id: { in: kept } }, select: { payloadId: true } })).map((d) => d.payloadId);
    const payloadsBefore = await setup.service.prisma.payload.count();

    // Batches of 2: the run loops until a short batch. The payloads of the 3 deleted deliveries that had
    // their own go in this run or the next (the rules run side by side); the shared one stays.
    const first = await setup.service.retention.runNow();
    expect(first["deliveries"]).toBe(4);
    const second = await setup.service.retention.runNow();
    expect(second["deliveries"]).toBe(0);
    expect(first["payloads"]! + second["payloads"]!).toBe(3);
    expect(await setup.service.prisma.payload.count()).toBe(payloadsBefore - 3);
    expect(await setup.service.prisma.payload.count({ where: { id: { in: keptPayloads } } })).toBe(new Set(keptPayloads).size);
    const left = await setup.service.prisma.delivery.findMany({ where: { webhookId: { in: [hook.id, other.id] } }, select: { id: true } });
    expect(left.map((d) => d.id).sort()).toEqual([...kept].sort());
    expect(await setup.service.prisma.deliveryAttempt.count({ where: { deliveryId: { in: gone } } })).toBe(0);
    expect(await setup.service.prisma.deliveryAttempt.count({ where: { deliveryId: { in: kept } } })).toBe(1 + 3 + 1 + 1);
    // The webhook itself and its log stay readable.
    const log = await api(setup.service, principal(hook.businessId)).get(`/api/v1/webhook/${hook.id}/deliveries`).expect(200);
    expect(log.body.meta.total).toBe(kept.length - 1);
    expect(await setup.service.retention.runNow()).toEqual({ deliveries: 0, payloads: 0, "audit entries": 0 });
  });

  it("deletes test deliveries (PENDING webhook.test, never sent) and their payloads after the window too (issue 35 item 13)", async () => {
    const hook = await newWebhook(setup.service);
    const owner = api(setup.service, principal(hook.businessId));
    const old = (await owner.post(`/api/v1/webhook/${hook.id}/test`).expect(201)).body.data;
    const recent = (await owner.post(`/api/v1/webhook/${hook.id}/test`).expect(201)).body.data;
    const at = new Date(Date.now() - 31 * DAY);
    await setup.service.prisma.$executeRaw`UPDATE "webhooks"."Delivery" SET "createdAt" = ${at}, "updatedAt" = ${at} WHERE id = ${old.id}::uuid`;
    const { payloadId } = (await setup.service.prisma.delivery.findUniqueOrThrow({ where: { id: old.id }, select: { payloadId: true } })) as { payloadId: string };
    await setup.service.prisma.payload.update({ where: { id: payloadId }, data: { createdAt: at } });
    // A real first attempt as old (it cannot happen, but if it did it must wait for its send, not go).
    const pending = await seedDelivery(setup.service, hook.id, hook.businessId, "PENDING", 31 * DAY);

    await setup.service.retention.runNow();
    await setup.service.retention.runNow();
    const left = await setup.service.prisma.delivery.findMany({ where: { webhookId: hook.id }, select: { id: true } });
    expect(left.map((d) => d.id).sort()).toEqual([recent.id, pending].sort());
    expect(await setup.service.prisma.payload.count({ where: { id: payloadId } })).toBe(0);
  });
});

describePostgres("delivery retention with two instances on one PostgreSQL database", () => {
  jest.setTimeout(60_000);
  let db: TestDatabase;

  beforeAll(async () => {
    db = await testDatabase("postgres");
  });
  afterAll(async () => {
    await db?.drop();
  });

  it("deletes each row once, without errors", async () => {
    const { logger, errors } = errorCollectingLogger("webhook-delivery");
    const env = { DELIVERY_RETENTION_MS: String(DAY), RETENTION_BATCH_SIZE: "25" };
    const [one, two] = await Promise.all([startService(db, env, { logger }), startService(db, env, { logger })]);
    try {
      const hook = await newWebhook(one);
      const old = new Date(Date.now() - 2 * DAY);
      // A payload each: a delivery is unique per payload and webhook.
      const payloads = Array.from({ length: 600 }, () => ({ id: uuidv7(), eventId: uuidv7(), body: "{}", createdAt: old }));
      await one.prisma.payload.createMany({ data: payloads });
      const rows = payloads.map(({ id: payloadId }) => ({
        id: uuidv7(),
        webhookId: hook.id,
        businessId: hook.businessId,
        event: "client.created",
        payloadId,
        status: "SUCCESS" as const,
        createdAt: old,
      }));
      await one.prisma.delivery.createMany({ data: rows });
      await one.prisma.$executeRaw`UPDATE "webhooks"."Delivery" SET "updatedAt" = ${old} WHERE "webhookId" = ${hook.id}::uuid`;
      await seedDelivery(one, hook.id, hook.businessId, "SUCCESS", 0);

      const [a, b] = await Promise.all([one.retention.runNow(), two.retention.runNow()]);
      expect(a.deliveries! + b.deliveries!).toBe(600);
      expect(await one.prisma.delivery.count({ where: { webhookId: hook.id } })).toBe(1);
      const [c, d] = await Promise.all([one.retention.runNow(), two.retention.runNow()]);
      // Payloads go in the first run (the rules run side by side) or the second, each once.
      expect(a.payloads! + b.payloads! + c.payloads! + d.payloads!).toBe(600);
      expect(await one.prisma.payload.count({ where: { id: { in: payloads.map((p) => p.id) } } })).toBe(0);
      expect(errors).toEqual([]);
    } finally {
      await one.stop();
      await two.stop();
    }
  });
});
