// Extensions §E1.5: "Every field it names must be a field of every entity the webhook subscribes to";
// §E4: a filter addresses `customFields.<key>` "with the same operators, casts and errors as built-in
// fields" (an unknown or archived key is an error). The active keys come from crm-records through the
// gateway (CUSTOM_FIELD_TYPES_HEADER); without them, no key can be checked.
import { appErrorOutcome } from "@crm/testing";
import { checkWebhookFilter } from "./webhook-filter";

describe("checkWebhookFilter with the business's custom keys", () => {
  const defined = { client: { tier: "select", tags: "multiSelect", score: "number", vip: "boolean" }, product: { tier: "select" } } as const;

  it("accepts keys every subscribed entity defines", () => {
    expect(appErrorOutcome(() => checkWebhookFilter("customFields.tier:gold,OR:[customFields.tags:vip,NOT:customFields.tier:silver]", ["client.created"], defined))).toBe("ok");
    expect(appErrorOutcome(() => checkWebhookFilter("customFields.tier:gold", ["client.created", "product.updated"], defined))).toBe("ok");
  });

  it("refuses a key an entity does not define (unknown, archived, or another entity's) at `filter`", () => {
    expect(appErrorOutcome(() => checkWebhookFilter("customFields.nope:x", ["client.created"], defined))).toEqual([400001, ["filter"]]);
    expect(appErrorOutcome(() => checkWebhookFilter("NOT:customFields.tags:vip", ["client.created", "product.created"], defined))).toEqual([400001, ["filter"]]);
    expect(appErrorOutcome(() => checkWebhookFilter("firstName:Ada,OR:[customFields.gone:1]", ["client.created"], defined))).toEqual([400001, ["filter"]]);
  });

  it("a key's definition types it as a built-in field of that type would be: casts and operators that do not suit it are refused", () => {
    expect(appErrorOutcome(() => checkWebhookFilter("customFields.score:gt:10,customFields.vip:true,customFields.tier:contains:go", ["client.created"], defined))).toBe("ok");
    expect(appErrorOutcome(() => checkWebhookFilter("customFields.score:gt:float(1.5)", ["client.created"], defined))).toBe("ok");
    expect(appErrorOutcome(() => checkWebhookFilter("customFields.score:contains:1", ["client.created"], defined))).toEqual([400001, ["filter"]]);
    expect(appErrorOutcome(() => checkWebhookFilter("customFields.vip:maybe", ["client.created"], defined))).toEqual([400001, ["filter"]]);
    expect(appErrorOutcome(() => checkWebhookFilter("customFields.score:abc", ["client.created"], defined))).toEqual([400001, ["filter"]]);
  });

  it("a value that merely mentions customFields.<key> is not a field", () => {
    expect(appErrorOutcome(() => checkWebhookFilter('notes:"see customFields.nope:1"', ["client.created"], defined))).toBe("ok");
  });

  it("checks no key without the definitions, nor for an entity they do not cover", () => {
    expect(appErrorOutcome(() => checkWebhookFilter("customFields.nope:x", ["client.created"]))).toBe("ok");
    expect(appErrorOutcome(() => checkWebhookFilter("customFields.nope:x", ["invoice.created"], defined))).toBe("ok");
  });
});
