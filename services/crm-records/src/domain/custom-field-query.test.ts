import type { QuerySpec } from "@crm/query-language";
import { customFieldKey, isCustomSortValue, namesCustomField, sortValueOf, withCustomFields } from "./custom-field-query";
import type { CustomFieldRule } from "./custom-field-values";

const rule = (key: string, type: CustomFieldRule["type"], extra: Partial<CustomFieldRule> = {}): CustomFieldRule => ({
  key,
  type,
  required: false,
  unique: false,
  options: null,
  defaultValue: null,
  isArchived: false,
  ...extra,
});

describe("custom fields in the query spec", () => {
  const base: QuerySpec = { fields: { id: { type: "uuid", nullable: false } }, relations: {} };

  it("adds each active definition as customFields.<key>, typed by it; archived ones are unknown", () => {
    const rules = [
      rule("n", "number"),
      rule("i", "integer"),
      rule("s", "select", { options: ["a"] }),
      rule("m", "multiSelect", { options: ["a"] }),
      rule("old", "text", { isArchived: true }),
    ];
    const spec = withCustomFields(base, rules);
    expect(spec.fields).toEqual({
      id: base.fields["id"],
      "customFields.n": { type: "decimal", nullable: true },
      "customFields.i": { type: "int", nullable: true, wideInteger: true },
      "customFields.s": { type: "enum", nullable: true, enumValues: ["a"] },
      "customFields.m": { type: "enum", nullable: true, enumValues: ["a"], sortable: false },
    });
    // One spec per definitions version (the cache's arrays), the entity's own spec untouched.
    expect(withCustomFields(base, rules)).toBe(spec);
    expect(Object.keys(base.fields)).toEqual(["id"]);
  });

  it("reads keys, sort values and cursor values", () => {
    expect(customFieldKey("customFields.tier")).toBe("tier");
    expect(customFieldKey("lastName")).toBeUndefined();
    expect(namesCustomField(undefined, [{ field: "customFields.a", direction: "asc" }])).toBe(true);
    expect(namesCustomField({ kind: "not", condition: { kind: "condition", field: "customFields.a", operator: "equals", value: "x" } }, [])).toBe(true);
    expect(namesCustomField({ kind: "condition", field: "lastName", operator: "equals", value: "x" }, [{ field: "id", direction: "asc" }])).toBe(false);
    expect(sortValueOf({ customFields: { a: 2 } }, "customFields.a")).toBe(2);
    expect(sortValueOf({ customFields: {} }, "customFields.a")).toBeNull();
    expect(sortValueOf({ lastName: "L" }, "lastName")).toBe("L");
    expect(isCustomSortValue("number", 1.5)).toBe(true);
    expect(isCustomSortValue("number", "1.5")).toBe(false);
    expect(isCustomSortValue("text", null)).toBe(true);
    expect(isCustomSortValue("date", 5)).toBe(false);
    expect(isCustomSortValue("boolean", "true")).toBe(false);
  });
});
