import { serializePayload } from "./payload";

describe("serializePayload", () => {
  const data = { id: "c1", firstName: "Ada", lastName: "Lovelace", email: "ada@example.com", businessId: "b1", createdAt: "2024-05-01T10:00:00.000Z" };

  it("produces exactly the four body fields, timestamp in ISO 8601 with milliseconds", () => {
    const body = serializePayload({ event: "client.created", data, businessId: "b1", timestamp: new Date(Date.UTC(2024, 4, 1, 10, 0, 0)) });
    expect(body).toBe(
      '{"event":"client.created","data":{"id":"c1","firstName":"Ada","lastName":"Lovelace","email":"ada@example.com","businessId":"b1","createdAt":"2024-05-01T10:00:00.000Z"},"businessId":"b1","timestamp":"2024-05-01T10:00:00.000Z"}',
    );
    const parsed = JSON.parse(body) as Record<string, unknown>;
    expect(Object.keys(parsed)).toEqual(["event", "data", "businessId", "timestamp"]);
    expect(parsed.timestamp).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
  });

  it("puts previousAttributes right after data when given, and nowhere else", () => {
    const body = serializePayload({
      event: "client.updated",
      data: { ...data, lastName: "Byron" },
      previousAttributes: { lastName: "Lovelace" },
      businessId: "b1",
      timestamp: new Date(0),
    });
    expect(Object.keys(JSON.parse(body) as object)).toEqual(["event", "data", "previousAttributes", "businessId", "timestamp"]);
    expect(JSON.parse(body)).toMatchObject({ previousAttributes: { lastName: "Lovelace" } });
    expect(body).toContain('"previousAttributes":{"lastName":"Lovelace"}');
  });

  it("keeps the milliseconds of the event time", () => {
    const body = serializePayload({ event: "invoice.updated", data: {}, businessId: "b1", timestamp: new Date("2024-05-01T10:00:00.123Z") });
    expect(JSON.parse(body)).toMatchObject({ timestamp: "2024-05-01T10:00:00.123Z" });
  });

  it("always carries a data field", () => {
    const body = serializePayload({ event: "webhook.test", data: undefined, businessId: "b1", timestamp: new Date(0) });
    expect(JSON.parse(body)).toEqual({ event: "webhook.test", data: null, businessId: "b1", timestamp: "1970-01-01T00:00:00.000Z" });
  });

  it("refuses an invalid date instead of sending a bad timestamp", () => {
    expect(() => serializePayload({ event: "client.created", data, businessId: "b1", timestamp: new Date(Number.NaN) })).toThrow(RangeError);
  });
});
