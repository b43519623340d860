// `customFields.<key>` in webhook filters: accepted by name when written, compared in the stored
// value's own type when matched. Table-driven, both sides of every case.
import { checkWebhookFilter, WebhookFilters } from "./webhook-filter";

const data = {
  id: "0190c3f4-8f3a-7000-8000-000000000001",
  firstName: "Ada",
  lastName: "Lovelace",
  isActive: true,
  customFields: {
    tier: "gold",
    score: 12.5,
    seats: 40,
    vip: true,
    since: "2024-02-29",
    seen: "2026-01-31T07:30:00.500Z",
    tags: ["vip", "new"],
    empty: null,
  },
};

describe("customFields.<key> in a webhook filter", () => {
  const filters = new WebhookFilters();
  const matches = (filter: string, record: object = data) =>
    filters.matches(filter, "client.updated", record as Record<string, unknown>, (err) => {
      throw err;
    });

  it.each([
    ["customFields.tier:gold", true],
    ["customFields.tier:Gold", false],
    ["customFields.tier:contains:OL", true],
    ["customFields.tier:startsWith:s", false],
    ["customFields.score:gt:10", true],
    ["customFields.score:12.5", true],
    ["customFields.score:12.50", true],
    ["customFields.score:lt:float(12.5)", false],
    ["customFields.score:lte:float(12.5)", true],
    ["customFields.seats:gte:int(40)", true],
    ["customFields.seats:gt:int(40)", false],
    ["customFields.seats:abc", false],
    ["customFields.vip:true", true],
    ["customFields.vip:bool(false)", false],
    ["NOT:customFields.vip:bool(false)", true],
    ["customFields.since:gte:date(2024-02-29)", true],
    ["customFields.since:2024-02-29", true],
    ["customFields.seen:gt:date(2026-01-31T09:00:00+02:00)", true],
    ["customFields.seen:lt:date(2026-01-31)", false],
    // multiSelect: eq is "contains this option"; other operators match when an option does.
    ["customFields.tags:vip", true],
    ["customFields.tags:old", false],
    ["customFields.tags:startsWith:NE", true],
    ["NOT:customFields.tags:old", true],
    // A null value, a key the record lacks, a value of another type than the cast: no match; NOT matches.
    ["customFields.empty:x", false],
    ["NOT:customFields.empty:x", true],
    ["customFields.missing:x", false],
    ["customFields.tier:gt:int(1)", false],
    ["customFields.score:bool(true)", false],
    ["customFields.tier:date(2024-01-01)", false],
    // Beside built-in fields, in every combinator.
    ["firstName:Ada,customFields.tier:gold", true],
    ["OR:[firstName:Bob,customFields.tags:new]", true],
    ["OR:[firstName:Bob,customFields.tags:old]", false],
  ])("%s → %s", (filter, expected) => {
    expect(matches(filter)).toBe(expected);
  });

  it("does not match a record without customFields (an event written before custom fields)", () => {
    const { customFields: _none, ...plain } = data;
    expect(matches("customFields.tier:gold", plain)).toBe(false);
    expect(matches("NOT:customFields.tier:gold", plain)).toBe(true);
  });

  it.each([
    ["customFields.tier:gold", ["client.created"]],
    ["customFields.score:gt:float(1.5),customFields.score:lt:int(100)", ["invoice.created", "quote.created"]],
    ["NOT:customFields.since:gte:date(2024-01-01)", ["employee.updated"]],
    ["customFields.tags:contains:vi", ["client.created"]],
    ['customFields.note:"int(5)"', ["client.created"]],
  ])("accepts %s when written", (filter, events) => {
    expect(() => checkWebhookFilter(filter, events)).not.toThrow();
  });

  it.each([
    ["customFields.Tier:gold", /unknown field "customFields.Tier"/],
    ["customFields.9x:gold", /unknown field/],
    ["customFields.:gold", /unknown field/],
    ["customFields.a.b:gold", /unknown field/],
    [`customFields.${"a".repeat(64)}:x`, /unknown field/],
    ["customFields:gold", /unknown field/],
    ["customFields.score:contains:int(1)", /string fields only/],
    ["customFields.score:gt:int(1),customFields.score:bool(true)", /bool\(\) cannot be compared/],
    ["customFields.vip:gt:bool(true)", /does not apply/],
    ["customFields.score:gt:float(abc)", /not a decimal number/],
    ["customFields.tier:", /missing value/],
  ])("refuses %s when written: 400001 at filter", (filter, reason) => {
    let thrown: unknown;
    try {
      checkWebhookFilter(filter, ["client.created"]);
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toMatchObject({ code: 400001, details: [{ path: "filter", message: expect.stringMatching(reason) }] });
  });
});
