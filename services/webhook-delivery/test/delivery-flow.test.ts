// Event on the bus -> delivery record -> signed POST to a loopback receiver -> SUCCESS in the log
// (interface §6, decisions §6). Signatures are checked by an independent implementation of
// interface §6 and by the standardwebhooks package, always over the raw body.
import { Webhook as StandardWebhook } from "standardwebhooks";
import { uuidv7, type EventEnvelope } from "@crm/contracts";
import { waitFor } from "@crm/testing";
import { api, databaseModes, inProcessBus, principal, publish, recordEvent, settled, startReceiver, setUpDelivery } from "./support/harness";
import { verifyInterfaceSignature } from "@crm/testing";
import { deliveryMetrics } from "@crm/telemetry";

/** crm_webhook_deliveries_cancelled_total for `reason`, in this process (the service runs in it). */
async function cancelledCount(reason: string): Promise<number> {
  return (await deliveryMetrics().cancelled.get()).values.find((v) => v.labels.reason === reason)?.value ?? 0;
}

function clientCreated(businessId: string): EventEnvelope {
  return {
    ...recordEvent(businessId, "client.created"),
    occurredAt: "2026-01-02T03:04:05.678Z",
    data: { id: uuidv7(), firstName: "Ada", lastName: "Lovelace", email: "ada@example.com", businessId, createdAt: "2026-01-02T03:04:05.678Z" },
  };
}

describe.each(databaseModes)("delivery flow on %s with the in-process bus", (mode) => {
  const setup = setUpDelivery(mode, { service: { WEBHOOK_RETRY_INTERVAL_MS: "100" }, receiver: { kind: "status", status: 200, body: "thanks" } });
  const bus = inProcessBus();

  it("sends exactly the interface §6 request, verifiably signed, and logs SUCCESS", async () => {
    const business = uuidv7();
    const owner = api(setup.service, principal(business));
    const hook = (await owner.post("/api/v1/webhook", { url: setup.receiver.url, events: ["client.created"] }).expect(201)).body.data;
    const event = clientCreated(business);
    const before = setup.receiver.requests.length;
    await publish(bus, [event]);

    const received = await waitFor(() => setup.receiver.requests[before]);
    expect(received.method).toBe("POST");
    expect(received.path).toBe("/hook");
    expect(received.headers["content-type"]).toBe("application/json");
    expect(received.headers["x-service-event"]).toBe("client.created");
    expect(verifyInterfaceSignature(hook.secret, received.rawBody, received.headers["x-service-signature"] as string)).toBe(true);
    expect(received.headers["x-service-signature"]).toMatch(/^sha256=[0-9a-f]{64}$/);
    // Re-serialising the parsed body would break the signature; the raw bytes are what was signed.
    expect(JSON.parse(received.rawBody)).toEqual({ event: "client.created", data: event.data, businessId: business, timestamp: "2026-01-02T03:04:05.678Z" });

    // Standard Webhooks headers, verified by the reference library.
    expect(received.headers["webhook-id"]).toBe(received.headers["x-service-delivery-id"]);
    const standard = new StandardWebhook(hook.secret);
    expect(() =>
      standard.verify(received.rawBody, {
        "webhook-id": received.headers["webhook-id"] as string,
        "webhook-timestamp": received.headers["webhook-timestamp"] as string,
        "webhook-signature": received.headers["webhook-signature"] as string,
      }),
    ).not.toThrow();
    expect(verifyInterfaceSignature("whsec_wrong", received.rawBody, received.headers["x-service-signature"] as string)).toBe(false);

    const log = await waitFor(async () => {
      const res = await owner.get(`/api/v1/webhook/${hook.id}/deliveries`).expect(200);
      return res.body.data[0]?.status === "SUCCESS" ? res.body : undefined;
    });
    expect(log.meta.total).toBe(1);
    expect(log.data[0]).toMatchObject({
      id: received.headers["x-service-delivery-id"],
      event: "client.created",
      status: "SUCCESS",
      responseStatus: 200,
      responseBody: "thanks",
      attempt: 1,
      nextRetryAt: null,
    });
  });

  it("carries previousAttributes of an updated event, non-ASCII text included, in the signed bytes as sent", async () => {
    const business = uuidv7();
    const owner = api(setup.service, principal(business));
    const hook = (await owner.post("/api/v1/webhook", { url: setup.receiver.url, events: ["client.updated", "client.created"] }).expect(201)).body.data;
    const created = clientCreated(business);
    const updated: EventEnvelope = {
      ...recordEvent(business, "client.updated"),
      occurredAt: "2026-01-02T03:04:06.000Z",
      data: { ...created.data, lastName: "Lovelace-Byron ✓ 😀", notes: "Grüße" },
      previousAttributes: { lastName: "Lovelace", notes: null },
    };
    await publish(bus, [created, updated]);
    const ours = await waitFor(() => {
      const found = setup.receiver.requests.filter((r) => r.rawBody.includes(business));
      return found.length >= 2 ? found : undefined;
    });
    const byEvent = new Map(ours.map((r) => [r.headers["x-service-event"], r]));
    const onUpdate = byEvent.get("client.updated")!;
    expect(verifyInterfaceSignature(hook.secret, onUpdate.rawBody, onUpdate.headers["x-service-signature"] as string)).toBe(true);
    expect(JSON.parse(onUpdate.rawBody)).toEqual({
      event: "client.updated",
      data: updated.data,
      previousAttributes: { lastName: "Lovelace", notes: null },
      businessId: business,
      timestamp: "2026-01-02T03:04:06.000Z",
    });
    // Sent as UTF-8, unescaped: the bytes on the wire are the bytes signed.
    expect(onUpdate.rawBody).toContain('"lastName":"Lovelace-Byron ✓ 😀"');
    const stored = await setup.service.prisma.payload.findUnique({ where: { eventId: updated.id } });
    expect(onUpdate.rawBody).toBe(stored!.body);
    // Not on other events.
    expect(JSON.parse(byEvent.get("client.created")!.rawBody)).not.toHaveProperty("previousAttributes");
  });

  it("stores an event's payload once, however many webhooks receive it, also when the event comes again", async () => {
    const business = uuidv7();
    const owner = api(setup.service, principal(business));
    const hooks = [];
    for (let i = 0; i < 3; i++) hooks.push((await owner.post("/api/v1/webhook", { url: `${setup.receiver.url}?n=${i}`, events: ["client.created"] }).expect(201)).body.data);
    const event = clientCreated(business);
    await publish(bus, [event]);
    await waitFor(async () => (await setup.service.prisma.delivery.count({ where: { eventId: event.id, status: "SUCCESS" } })) === 3, 10_000, 20);
    // A fourth webhook subscribes, and the bus re-delivers the event (at least once).
    hooks.push((await owner.post("/api/v1/webhook", { url: `${setup.receiver.url}?n=3`, events: ["client.created"] }).expect(201)).body.data);
    await publish(bus, [event]);
    await waitFor(async () => (await setup.service.prisma.delivery.count({ where: { eventId: event.id, status: "SUCCESS" } })) === 4, 10_000, 20);

    const deliveries = await setup.service.prisma.delivery.findMany({ where: { eventId: event.id } });
    expect(new Set(deliveries.map((d) => d.webhookId))).toEqual(new Set(hooks.map((h) => h.id)));
    expect(new Set(deliveries.map((d) => d.payloadId)).size).toBe(1);
    const payloads = await setup.service.prisma.payload.findMany({ where: { eventId: event.id } });
    expect(payloads).toHaveLength(1);
    // Every receiver got exactly the stored bytes.
    const bodies = setup.receiver.requests.filter((r) => deliveries.some((d) => d.id === r.headers["x-service-delivery-id"])).map((r) => r.rawBody);
    expect(bodies).toHaveLength(4);
    expect(new Set(bodies)).toEqual(new Set([payloads[0]!.body]));
  });

  it("signs with the new secret after rotate-secret", async () => {
    const business = uuidv7();
    const owner = api(setup.service, principal(business));
    const hook = (await owner.post("/api/v1/webhook", { url: setup.receiver.url, events: ["invoice.created"] }).expect(201)).body.data;
    const rotated = (await owner.post(`/api/v1/webhook/${hook.id}/rotate-secret`).expect(200)).body.data;
    const before = setup.receiver.requests.length;
    await publish(bus, [recordEvent(business, "invoice.created", { id: uuidv7() })]);
    const received = await waitFor(() => setup.receiver.requests[before]);
    const header = received.headers["x-service-signature"] as string;
    expect(verifyInterfaceSignature(rotated.secret, received.rawBody, header)).toBe(true);
    expect(verifyInterfaceSignature(hook.secret, received.rawBody, header)).toBe(false);
  });

  it("delivers with the real credentials of a URL that readers only see redacted", async () => {
    const business = uuidv7();
    const owner = api(setup.service, principal(business));
    const url = setup.receiver.url.replace("://", "://alice:hunter2@");
    const hook = (await owner.post("/api/v1/webhook", { url, events: ["invoice.created"] }).expect(201)).body.data;
    expect(hook.url).toBe(setup.receiver.url.replace("://", "://alice:****@"));
    const before = setup.receiver.requests.length;
    await publish(bus, [recordEvent(business, "invoice.created", { id: uuidv7() })]);
    const received = await waitFor(() => setup.receiver.requests[before]);
    expect(received.headers.authorization).toBe(`Basic ${Buffer.from("alice:hunter2").toString("base64")}`);
  });

  it("sends nothing to inactive webhooks, unsubscribed events or other businesses", async () => {
    const business = uuidv7();
    const stranger = uuidv7();
    const owner = api(setup.service, principal(business));
    const quiet = await startReceiver();
    try {
      const subscribed = (await owner.post("/api/v1/webhook", { url: quiet.url, events: ["product.updated"] }).expect(201)).body.data;
      const inactive = (await owner.post("/api/v1/webhook", { url: quiet.url, events: ["product.created"] }).expect(201)).body.data;
      await owner.delete(`/api/v1/webhook/${inactive.id}`).expect(200);
      const paused = (await owner.post("/api/v1/webhook", { url: quiet.url, events: ["product.created"] }).expect(201)).body.data;
      await owner.put(`/api/v1/webhook/${paused.id}`, { isActive: false }).expect(200);

      await publish(bus, [
        recordEvent(business, "product.created"), // only inactive webhooks subscribe
        recordEvent(business, "product.deleted"), // nobody subscribes
        recordEvent(stranger, "product.updated"), // another business's event
      ]);
      // A marker the subscribed webhook does get, so "nothing arrived" is not just "not yet".
      await publish(bus, [recordEvent(business, "product.updated", { marker: true })]);
      await waitFor(() => quiet.requests.length >= 1);
      await settled(setup.service);
      expect(quiet.requests).toHaveLength(1);
      expect(JSON.parse(quiet.requests[0]!.rawBody)).toMatchObject({ event: "product.updated", businessId: business, data: { marker: true } });
      for (const hook of [inactive, paused]) {
        expect((await owner.get(`/api/v1/webhook/${hook.id}/deliveries`).expect(200)).body.meta.total).toBe(0);
      }
      expect((await owner.get(`/api/v1/webhook/${subscribed.id}/deliveries`).expect(200)).body.meta.total).toBe(1);
    } finally {
      await quiet.close();
    }
  });

  it("cancels pending retries of a webhook deactivated meanwhile, without sending", async () => {
    const business = uuidv7();
    const owner = api(setup.service, principal(business));
    const failing = await startReceiver({ kind: "status", status: 500 });
    try {
      // Long retry delay: the first attempt fails, then the webhook is deactivated before the retry.
      const hook = (await owner.post("/api/v1/webhook", { url: failing.url, events: ["service.created"] }).expect(201)).body.data;
      await publish(bus, [recordEvent(business, "service.created")]);
      const first = await waitFor(async () => {
        const d = (await owner.get(`/api/v1/webhook/${hook.id}/deliveries`)).body.data[0];
        return d?.status === "RETRYING" && d.attempt === 1 ? d : undefined;
      });
      await owner.delete(`/api/v1/webhook/${hook.id}`).expect(200);
      const cancelledBefore = await cancelledCount("webhook_inactive");
      // Make the retry due now, as the clock would after the configured delay.
      await setup.service.prisma.delivery.update({ where: { id: first.id }, data: { nextRetryAt: new Date() } });
      const cancelled = await waitFor(async () => {
        const d = (await owner.get(`/api/v1/webhook/${hook.id}/deliveries`)).body.data[0];
        return d?.status === "FAILED" ? d : undefined;
      });
      expect(cancelled).toMatchObject({ attempt: 1, nextRetryAt: null, responseStatus: 0, responseBody: "Webhook is inactive; delivery cancelled" });
      expect(failing.requests).toHaveLength(1);
      expect((await cancelledCount("webhook_inactive")) - cancelledBefore).toBe(1);
    } finally {
      await failing.close();
    }
  });
});
