import { CUSTOM_FIELD_LIMITS, type CustomFieldType } from "@crm/contracts";
import { isAppError } from "@crm/errors";
import { applyCustomFieldChange, checkValue, customFieldChange, customFieldsView, type CustomFieldRule } from "./custom-field-values";

const rule = (key: string, type: CustomFieldType, extra: Partial<CustomFieldRule> = {}): CustomFieldRule => ({
  key,
  type,
  required: false,
  unique: false,
  options: type === "select" || type === "multiSelect" ? ["red", "green", "dark blue"] : null,
  defaultValue: null,
  isArchived: false,
  ...extra,
});

/** The 400001 details a call throws, as [path, message] pairs. */
function problems(work: () => unknown): Array<[string, string]> {
  try {
    work();
  } catch (err) {
    if (isAppError(err) && err.code === 400001) return (err.details ?? []).map((d) => [d.path, d.message]);
    throw err;
  }
  return [];
}

describe("checkValue", () => {
  const accepted: Array<[CustomFieldType, unknown, unknown?]> = [
    ["text", ""],
    ["text", "x".repeat(CUSTOM_FIELD_LIMITS.textMaxLength)],
    // Characters, not UTF-16 units: 1,000 emoji are 2,000 units.
    ["text", "😀".repeat(CUSTOM_FIELD_LIMITS.textMaxLength)],
    ["longText", "x".repeat(CUSTOM_FIELD_LIMITS.longTextMaxLength)],
    ["number", 0],
    ["number", -12.3456],
    ["number", 99_999_999_999.9999],
    ["integer", -42],
    ["integer", Number.MAX_SAFE_INTEGER],
    ["boolean", false],
    ["date", "2024-02-29"],
    ["dateTime", "2026-01-31T09:30:00Z", "2026-01-31T09:30:00.000Z"],
    ["dateTime", "2026-01-31T09:30:00.5+02:00", "2026-01-31T07:30:00.500Z"],
    ["dateTime", "2026-01-31T09:30-05:00", "2026-01-31T14:30:00.000Z"],
    ["email", "ada@example.com"],
    ["url", "https://example.com/a?b=c"],
    ["url", "http://localhost:3000"],
    ["select", "dark blue"],
    ["multiSelect", ["green", "red"]],
    ["multiSelect", []],
  ];
  it.each(accepted)("%s accepts %j", (type, value, normalised = value) => {
    expect(checkValue(rule("f", type), value)).toEqual({ value: normalised });
  });

  const refused: Array<[CustomFieldType, unknown]> = [
    ["text", 1],
    ["text", "x".repeat(CUSTOM_FIELD_LIMITS.textMaxLength + 1)],
    ["longText", "x".repeat(CUSTOM_FIELD_LIMITS.longTextMaxLength + 1)],
    ["number", "1"],
    ["number", 1.23456],
    ["number", 100_000_000_000],
    ["number", Number.NaN],
    ["integer", 1.5],
    ["integer", 2 ** 53],
    ["boolean", "true"],
    ["date", "2023-02-29"],
    ["date", "2024-2-1"],
    ["date", "2024-01-01T00:00:00Z"],
    ["dateTime", "2026-01-31"],
    ["dateTime", "2026-01-31T09:30:00"],
    ["dateTime", "2026-02-30T09:30:00Z"],
    ["dateTime", "yesterday"],
    ["dateTime", "9999-12-31T23:30:00-05:00"],
    ["email", "not-an-email"],
    ["url", "example.com"],
    ["url", "ftp://example.com"],
    ["url", "javascript:alert(1)"],
    ["url", "/relative"],
    ["url", " https://example.com"],
    ["url", "https://example.com/a b"],
    ["url", "ht\ttps://example.com"],
    ["select", "blue"],
    ["select", ["red"]],
    ["multiSelect", "red"],
    ["multiSelect", ["red", "red"]],
    ["multiSelect", ["purple"]],
  ];
  it.each(refused)("%s refuses %j", (type, value) => {
    expect(checkValue(rule("f", type), value)).toEqual({ problem: expect.any(String) });
  });
});

describe("customFieldChange", () => {
  const rules = [
    rule("externalId", "text", { unique: true }),
    rule("score", "integer", { required: true, defaultValue: 5 }),
    rule("tier", "select", { defaultValue: "red" }),
    rule("owner", "email", { required: true }),
    rule("old", "text", { isArchived: true }),
  ];

  it("fills left-out keys from defaults on create and refuses a missing required one", () => {
    expect(problems(() => customFieldChange(rules, undefined, "create"))).toEqual([["customFields.owner", "Required"]]);
    expect(customFieldChange(rules, { owner: "a@b.co" }, "create")).toEqual({ set: { owner: "a@b.co", score: 5, tier: "red" }, clear: [] });
    // A value given (or null, for an optional key) beats the default.
    expect(customFieldChange(rules, { owner: "a@b.co", tier: null, score: 7 }, "create")).toEqual({ set: { owner: "a@b.co", score: 7 }, clear: ["tier"] });
  });

  it("on update, sets and clears what is given; a required key may be left out but not cleared", () => {
    expect(customFieldChange(rules, { tier: null, externalId: "x" }, "update")).toEqual({ set: { externalId: "x" }, clear: ["tier"] });
    expect(customFieldChange(rules, undefined, "update")).toEqual({ set: {}, clear: [] });
    expect(problems(() => customFieldChange(rules, { owner: null }, "update"))).toEqual([["customFields.owner", "Required"]]);
  });

  it("names every problem at customFields.<key>: unknown, archived, wrong type", () => {
    const found = problems(() => customFieldChange(rules, { nope: 1, old: "x", score: "high", tier: "blue" }, "update"));
    expect(found.map(([path]) => path)).toEqual(["customFields.nope", "customFields.old", "customFields.score", "customFields.tier"]);
    expect(found[1]![1]).toMatch(/archived/);
    expect(problems(() => customFieldChange(rules, [1], "update"))).toEqual([["customFields", expect.any(String)]]);
    expect(problems(() => customFieldChange(rules, "x", "create"))).toEqual([["customFields", expect.any(String)]]);
  });
});

describe("stored values and their view", () => {
  const rules = [rule("a", "text"), rule("b", "integer"), rule("gone", "text", { isArchived: true })];

  it("merges by key, clears with null, keeps archived values stored", () => {
    const stored = { a: "x", gone: "kept" };
    expect(applyCustomFieldChange(stored, { set: { b: 2 }, clear: ["a"] })).toEqual({ b: 2, gone: "kept" });
  });

  it("shows one member per active definition, in definition order, null when unset, never an archived one", () => {
    expect(customFieldsView(rules, { gone: "kept", b: 3 })).toEqual({ a: null, b: 3 });
    expect(Object.keys(customFieldsView(rules, { b: 3, a: "x" }))).toEqual(["a", "b"]);
    expect(customFieldsView(rules, null)).toEqual({ a: null, b: null });
  });
});
