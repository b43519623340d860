import { eventCatalogue, recordEntities } from "./events";
import { buildEventTypes, deliveryBodySchema, recordEventDataSchema } from "./event-types";

describe("event types (extensions §E1.6)", () => {
  const types = buildEventTypes();

  it("lists the 28 events of the catalogue, in its order, each with a draft-07 schema of a closed object", () => {
    expect(types.map((t) => t.name)).toEqual([...eventCatalogue]);
    for (const t of types) {
      expect(t.name).toBe(`${t.entity}.${t.action}`);
      expect(t.description.length).toBeGreaterThan(10);
      expect(t.schema).toMatchObject({ $schema: "http://json-schema.org/draft-07/schema#", type: "object", additionalProperties: false });
      const required = (t.schema as { required: string[] }).required;
      expect(required).toEqual(t.action === "updated" ? ["event", "data", "previousAttributes", "businessId", "timestamp"] : ["event", "data", "businessId", "timestamp"]);
    }
    expect(types.find((t) => t.name === "invoice.created")!.description).toMatch(/^An invoice/);
  });

  it.each(recordEntities)("%s: data is the record without relations", (entity) => {
    const fields = Object.keys(recordEventDataSchema(entity).shape);
    expect(fields).toEqual(expect.arrayContaining(["id", "businessId", "createdAt", "updatedAt"]));
    for (const relation of ["contacts", "invoices", "quotes", "client", "contactsTruncated"]) expect(fields).not.toContain(relation);
  });

  it("accepts a real-shaped body and refuses a wrong event name, an unknown field or updatedAt in previousAttributes", () => {
    const data = {
      id: "c1",
      businessId: "b1",
      firstName: "Ada",
      lastName: "Byron",
      email: null,
      phone: null,
      companyName: null,
      notes: null,
      isActive: true,
      createdAt: "2026-01-01T00:00:00.000Z",
      updatedAt: "2026-01-01T00:00:01.000Z",
      deletedAt: null,
      customFields: { externalId: "crm-42", tier: null },
    };
    const body = {
      event: "client.updated",
      data,
      previousAttributes: { lastName: "Lovelace", customFields: { tier: "gold" } },
      businessId: "b1",
      timestamp: "2026-01-01T00:00:01.000Z",
    };
    const schema = deliveryBodySchema("client", "updated");
    expect(schema.safeParse(body).success).toBe(true);
    expect(schema.safeParse({ ...body, event: "client.created" }).success).toBe(false);
    expect(schema.safeParse({ ...body, data: { ...data, extra: 1 } }).success).toBe(false);
    expect(schema.safeParse({ ...body, previousAttributes: { updatedAt: data.createdAt } }).success).toBe(false);
    expect(deliveryBodySchema("client", "created").safeParse({ ...body, event: "client.created" }).success).toBe(false);
    // A restored record is live again: its data is the record, deletedAt null (extensions §E5).
    const { previousAttributes: _, ...restored } = { ...body, event: "client.restored" };
    expect(deliveryBodySchema("client", "restored").safeParse(restored).success).toBe(true);
  });
});
