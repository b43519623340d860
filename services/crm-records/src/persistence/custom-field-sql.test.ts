import type { ConditionNode } from "@crm/query-language";
import { customLeaf, customNegatedLeaf, customSortExpression } from "./custom-field-sql";
import { SqlParams } from "./list-sql";

const condition = (operator: ConditionNode["operator"], value: ConditionNode["value"]): ConditionNode => ({ kind: "condition", field: "customFields.k", operator, value });

describe("custom field SQL", () => {
  it("eq is containment of the typed value, bound as one jsonb parameter", () => {
    const cases: Array<[Parameters<typeof customLeaf>[2], ConditionNode["value"], string]> = [
      ["text", 'a"b', '{"k":"a\\"b"}'],
      ["number", "-007.50", '{"k":-7.50}'],
      ["integer", 12, '{"k":12}'],
      ["boolean", false, '{"k":false}'],
      ["date", new Date("2024-01-15T00:00:00Z"), '{"k":"2024-01-15"}'],
      ["dateTime", new Date("2024-01-15T10:00:00+01:00"), '{"k":"2024-01-15T09:00:00.000Z"}'],
      ["multiSelect", "vip", '{"k":["vip"]}'],
    ];
    for (const [type, value, json] of cases) {
      const params = new SqlParams();
      expect(customLeaf(params, "k", type, condition("equals", value))).toBe(`("customFields" @> $1::jsonb)`);
      expect(params.values).toEqual([json]);
    }
  });

  it("a date equals no instant but a midnight UTC", () => {
    const params = new SqlParams();
    expect(customLeaf(params, "k", "date", condition("equals", new Date("2024-01-15T10:00:00Z")))).toBe("(FALSE)");
    expect(params.values).toEqual([]);
  });

  it("ranges compare the value cast to its type; substrings are escaped ILIKE; negation keeps records without a value", () => {
    const params = new SqlParams();
    expect(customLeaf(params, "k", "number", condition("gt", "1.5"))).toBe(`((("customFields" ->> 'k'))::numeric > $1::numeric)`);
    expect(customLeaf(params, "k", "date", condition("lte", new Date(0)))).toBe(`(((("customFields" ->> 'k'))::date::timestamp AT TIME ZONE 'UTC') <= $2::timestamptz)`);
    expect(customLeaf(params, "k", "text", condition("contains", "50%_"))).toBe(`(("customFields" ->> 'k') ILIKE $3)`);
    expect(params.values.slice(2)).toEqual(["%50\\%\\_%"]);
    expect(customNegatedLeaf(params, "k", "boolean", condition("equals", true))).toBe(`(("customFields" -> 'k') IS NULL OR NOT ("customFields" @> $4::jsonb))`);
  });

  it("sorts by the typed value, and never writes a key outside the definitions' pattern into a statement", () => {
    expect(customSortExpression("score", "integer")).toBe(`(("customFields" ->> 'score'))::numeric`);
    expect(customSortExpression("seen", "dateTime")).toBe(`("customFields" ->> 'seen')`);
    expect(() => customSortExpression("x'; DROP TABLE t; --", "text")).toThrow();
    expect(() => customLeaf(new SqlParams(), "a'b", "text", condition("gt", "x"))).toThrow();
    expect(() => customSortExpression("tags", "multiSelect")).toThrow();
  });
});
