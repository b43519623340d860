// An update's audit `changes` (extensions §E7): "the same fields as previousAttributes", and §E4:
// previousAttributes "carries customFields with only the keys that changed", so both sides of the
// customFields change name only those keys.
import type { EventEnvelope } from "@crm/contracts";
import { recordAuditChange } from "./record-audit";

function updated(data: Record<string, unknown>, previousAttributes: Record<string, unknown>): EventEnvelope {
  return { id: "e1", type: "client.updated", businessId: "b1", occurredAt: "2026-01-01T00:00:00.000Z", version: 1, data, previousAttributes } as EventEnvelope;
}

describe("recordAuditChange", () => {
  it("an update's customFields change names only the keys that changed, on both sides", () => {
    const event = updated({ id: "c1", notes: "n", customFields: { a: "9", b: "2", c: null } }, { notes: null, customFields: { a: "1" } });
    expect(recordAuditChange(event).changes).toEqual({ notes: { from: null, to: "n" }, customFields: { from: { a: "1" }, to: { a: "9" } } });
  });

  it("a cleared custom field shows to: null for its key", () => {
    const event = updated({ id: "c1", customFields: { a: null, b: "2" } }, { customFields: { a: "1" } });
    expect(recordAuditChange(event).changes).toEqual({ customFields: { from: { a: "1" }, to: { a: null } } });
  });
});
