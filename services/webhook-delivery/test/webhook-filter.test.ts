// Webhook filters (extensions §E1.5), on PGlite and on PostgreSQL: the filter is checked against
// every subscribed entity when written (400001 at `filter`), and decides per event whether a
// delivery record exists at all. Both sides are tested on every case: a filter that silently stops
// all deliveries (Twenty #6664) is as wrong as one that lets everything through.
import { uuidv7, type EventEnvelope } from "@crm/contracts";
import { waitFor } from "@crm/testing";
import { api, databaseModes, inProcessBus, principal, publish, recordEvent, setUpDelivery } from "./support/harness";
import { verifyInterfaceSignature } from "@crm/testing";

function invoiceEvent(businessId: string, type: string, data: Record<string, unknown>, previousAttributes?: Record<string, unknown>): EventEnvelope {
  return {
    ...recordEvent(businessId, type),
    data: {
      id: uuidv7(),
      businessId,
      number: "INV-000001",
      clientId: uuidv7(),
      currency: "EUR",
      notes: null,
      items: [{ description: "Work", quantity: 1, unitPrice: 1500 }],
      totalAmount: 1500,
      status: "PAID",
      issueDate: null,
      dueDate: null,
      createdAt: "2026-01-01T00:00:00.000Z",
      updatedAt: "2026-01-01T00:00:00.000Z",
      ...data,
    },
    ...(previousAttributes && { previousAttributes }),
  };
}

describe.each(databaseModes)("webhook filters on %s", (mode) => {
  // Opening PGlite takes seconds on a loaded machine; the deliveries themselves are waited for in bounded loops.
  jest.setTimeout(60_000);
  const setup = setUpDelivery(mode);
  const bus = inProcessBus();

  describe("writing a filter", () => {
    const business = uuidv7();
    const owner = () => api(setup.service, principal(business));

    it("is stored and shown on create, GET and list; null by default", async () => {
      const plain = (
        await owner()
          .post("/api/v1/webhook", { url: setup.receiver.url, events: ["client.created"] })
          .expect(201)
      ).body.data;
      expect(plain.filter).toBeNull();
      const filter = "OR:[status:PAID,totalAmount:gte:float(1000.5)],NOT:currency:USD";
      const hook = (
        await owner()
          .post("/api/v1/webhook", { url: setup.receiver.url, events: ["invoice.created", "invoice.updated"], filter })
          .expect(201)
      ).body.data;
      expect(hook.filter).toBe(filter);
      expect((await owner().get(`/api/v1/webhook/${hook.id}`).expect(200)).body.data.filter).toBe(filter);
      const listed = (await owner().get("/api/v1/webhook").expect(200)).body.data as Array<{ id: string; filter: string | null }>;
      expect(listed.find((h) => h.id === hook.id)!.filter).toBe(filter);
    });

    it.each([
      ["malformed", ["client.created"], "firstName:", /missing value/],
      ["unknown field", ["client.created"], "nickname:x", /unknown field "nickname"/],
      ["a field one of the subscribed entities lacks", ["client.created", "invoice.created"], "totalAmount:gt:100", /invoice|client/],
      ["an enum value one entity does not have", ["invoice.updated", "quote.updated"], "status:PAID", /quote/],
      ["a value of the wrong type", ["invoice.created"], "totalAmount:gt:lots", /not a valid decimal/],
      ["a string operator on a boolean", ["client.created"], "isActive:contains:t", /string fields only/],
      ["the empty string", ["client.created"], "", /empty condition/],
      ["more than 50 conditions", ["client.created"], Array.from({ length: 51 }, () => "firstName:a").join(","), /more than 50/],
      ["longer than 2,000 characters", ["client.created"], `firstName:${"a".repeat(2000)}`, /longer than 2000/],
      ["nesting deeper than 5", ["client.created"], "NOT:NOT:NOT:NOT:NOT:NOT:firstName:a", /deeper than 5/],
    ])("refuses %s: 400001 at filter", async (_name, events, filter, reason) => {
      const res = await owner().post("/api/v1/webhook", { url: setup.receiver.url, events, filter }).expect(400);
      expect(res.body.error).toMatchObject({ code: 400001, message: "Validation failed", details: [{ path: "filter", message: expect.stringMatching(reason) }] });
    });

    it("refuses a filter that is not a string or null", async () => {
      const res = await owner()
        .post("/api/v1/webhook", { url: setup.receiver.url, events: ["client.created"], filter: 5 })
        .expect(400);
      expect(res.body.error.details[0].path).toBe("filter");
    });

    it("PUT re-checks the filter when the events or the filter change, and null removes it", async () => {
      const hook = (
        await owner()
          .post("/api/v1/webhook", { url: setup.receiver.url, events: ["invoice.created"], filter: "totalAmount:gt:100" })
          .expect(201)
      ).body.data;
      const widened = await owner()
        .put(`/api/v1/webhook/${hook.id}`, { events: ["invoice.created", "client.created"] })
        .expect(400);
      expect(widened.body.error.details[0].path).toBe("filter");
      const bad = await owner().put(`/api/v1/webhook/${hook.id}`, { filter: "firstName:Ada" }).expect(400);
      expect(bad.body.error.details[0].path).toBe("filter");
      // Nothing was changed by the refused updates.
      expect((await owner().get(`/api/v1/webhook/${hook.id}`).expect(200)).body.data).toMatchObject({ events: ["invoice.created"], filter: "totalAmount:gt:100" });
      const both = await owner()
        .put(`/api/v1/webhook/${hook.id}`, { events: ["client.created", "employee.created"], filter: "firstName:Ada" })
        .expect(200);
      expect(both.body.data).toMatchObject({ events: ["client.created", "employee.created"], filter: "firstName:Ada" });
      expect((await owner().put(`/api/v1/webhook/${hook.id}`, { description: "unrelated" }).expect(200)).body.data.filter).toBe("firstName:Ada");
      const removed = await owner()
        .put(`/api/v1/webhook/${hook.id}`, { filter: null, events: ["invoice.created"] })
        .expect(200);
      expect(removed.body.data.filter).toBeNull();
    });
  });

  describe("delivering", () => {
    it("delivers the events whose data matches, and creates no delivery record for the others", async () => {
      const business = uuidv7();
      const owner = api(setup.service, principal(business));
      const filtered = (
        await owner
          .post("/api/v1/webhook", { url: `${setup.receiver.url}?filtered`, events: ["invoice.created", "invoice.updated"], filter: "status:PAID,totalAmount:gte:1000" })
          .expect(201)
      ).body.data;
      const unfiltered = (await owner.post("/api/v1/webhook", { url: `${setup.receiver.url}?all`, events: ["invoice.created", "invoice.updated"] }).expect(201)).body.data;

      const matching = invoiceEvent(business, "invoice.created", { notes: "Grüße" });
      const tooSmall = invoiceEvent(business, "invoice.created", { totalAmount: 999.99 });
      const notPaid = invoiceEvent(business, "invoice.updated", { status: "SENT" }, { status: "PAID" });
      const nowPaid = invoiceEvent(business, "invoice.updated", { totalAmount: 1000 }, { status: "SENT" });
      await publish(bus, [matching, tooSmall, notPaid, nowPaid]);

      // The unfiltered webhook gets all four: the bus and the consumer are working.
      await waitFor(async () => (await setup.service.prisma.delivery.count({ where: { webhookId: unfiltered.id, status: "SUCCESS" } })) === 4, 30_000, 20);
      await waitFor(async () => (await setup.service.prisma.delivery.count({ where: { webhookId: filtered.id, status: "SUCCESS" } })) === 2, 30_000, 20);
      const records = await setup.service.prisma.delivery.findMany({ where: { webhookId: filtered.id } });
      expect(new Set(records.map((d) => d.eventId))).toEqual(new Set([matching.id, nowPaid.id]));

      const received = setup.receiver.requests.filter((r) => r.path === "/hook?filtered" && r.rawBody.includes(business));
      expect(received).toHaveLength(2);
      for (const r of received) expect(verifyInterfaceSignature(filtered.secret, r.rawBody, r.headers["x-service-signature"] as string)).toBe(true);
      const log = (await owner.get(`/api/v1/webhook/${filtered.id}/deliveries`).expect(200)).body;
      expect(log.meta.total).toBe(2);
    });

    it("filters on customFields.<key> (extensions §E4): accepted by name, compared in the value's own type, multiSelect eq = contains", async () => {
      const business = uuidv7();
      const owner = api(setup.service, principal(business));
      const filter = "customFields.tier:gold,customFields.score:gte:float(10),customFields.tags:vip";
      const hook = (await owner.post("/api/v1/webhook", { url: `${setup.receiver.url}?custom`, events: ["client.created", "invoice.created"], filter }).expect(201)).body.data;
      expect(hook.filter).toBe(filter);
      const refused = await owner.post("/api/v1/webhook", { url: setup.receiver.url, events: ["client.created"], filter: "customFields.Bad-Key:x" }).expect(400);
      expect(refused.body.error.details[0]).toMatchObject({ path: "filter", message: expect.stringMatching(/unknown field "customFields.Bad-Key"/) });

      const client = (customFields: Record<string, unknown> | undefined) =>
        recordEvent(business, "client.created", {
          id: uuidv7(),
          businessId: business,
          firstName: "A",
          lastName: "B",
          email: null,
          isActive: true,
          ...(customFields && { customFields }),
        });
      const matching = client({ tier: "gold", score: 12.5, tags: ["new", "vip"] });
      const invoice = invoiceEvent(business, "invoice.created", { customFields: { tier: "gold", score: 10, tags: ["vip"] } });
      const others = [
        client({ tier: "silver", score: 12.5, tags: ["vip"] }),
        client({ tier: "gold", score: 9.99, tags: ["vip"] }),
        client({ tier: "gold", score: 12.5, tags: ["new"] }),
        client({ tier: "gold", score: "12.5", tags: ["vip"] }),
        client({ tier: "gold", score: null, tags: ["vip"] }),
        client({}),
        client(undefined),
      ];
      await publish(bus, [...others, matching, invoice]);
      const count = () => setup.service.prisma.delivery.count({ where: { webhookId: hook.id } });
      await waitFor(async () => (await count()) >= 2, 30_000, 20);
      // A later marker event: once it is delivered, every event before it was consumed.
      const marker = client({ tier: "gold", score: 100, tags: ["vip"] });
      await publish(bus, [marker]);
      await waitFor(async () => (await count()) === 3, 30_000, 20);
      const records = await setup.service.prisma.delivery.findMany({ where: { webhookId: hook.id } });
      expect(new Set(records.map((d) => d.eventId))).toEqual(new Set([matching.id, invoice.id, marker.id]));
    });

    it("applies a filter changed by PUT to the next event, and delivers everything again once it is removed", async () => {
      const business = uuidv7();
      const owner = api(setup.service, principal(business));
      const hook = (await owner.post("/api/v1/webhook", { url: setup.receiver.url, events: ["client.created"], filter: "lastName:startsWith:lo" }).expect(201)).body.data;
      const client = (lastName: string) => recordEvent(business, "client.created", { id: uuidv7(), businessId: business, firstName: "A", lastName, email: null, isActive: true });
      const count = () => setup.service.prisma.delivery.count({ where: { webhookId: hook.id } });

      await publish(bus, [client("Lovelace"), client("Hopper")]);
      await waitFor(async () => (await count()) === 1, 30_000, 20);
      await owner.put(`/api/v1/webhook/${hook.id}`, { filter: "NOT:lastName:startsWith:lo" }).expect(200);
      await publish(bus, [client("Lovelace"), client("Hopper"), client("Turing")]);
      await waitFor(async () => (await count()) === 3, 30_000, 20);
      await owner.put(`/api/v1/webhook/${hook.id}`, { filter: null }).expect(200);
      await publish(bus, [client("Lovelace"), client("Hopper")]);
      await waitFor(async () => (await count()) === 5, 30_000, 20);
      const events = await setup.service.prisma.delivery.findMany({ where: { webhookId: hook.id } });
      const payloads = await setup.service.prisma.payload.findMany({ where: { id: { in: events.map((d) => d.payloadId) } } });
      const bodyOf = new Map(payloads.map((p) => [p.id, p.body]));
      const lastNames = events.map((d) => (JSON.parse(bodyOf.get(d.payloadId) ?? "") as { data: { lastName: string } }).data.lastName).sort();
      expect(lastNames).toEqual(["Hopper", "Hopper", "Lovelace", "Lovelace", "Turing"]);
    });
  });
});
