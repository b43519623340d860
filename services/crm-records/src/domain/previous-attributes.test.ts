import { previousAttributes } from "./previous-attributes";

const invoice = {
  id: "i1",
  status: "DRAFT",
  notes: null,
  items: [{ description: "Work", quantity: 1, unitPrice: 10 }],
  totalAmount: 10,
  updatedAt: "2026-01-01T00:00:00.000Z",
};

describe("previousAttributes", () => {
  it.each([
    ["nothing changed (updatedAt is never a change)", { ...invoice, updatedAt: "2026-02-01T00:00:00.000Z" }, {}],
    ["one scalar", { ...invoice, status: "PAID" }, { status: "DRAFT" }],
    ["null to a value keeps the null", { ...invoice, notes: "hi" }, { notes: null }],
    ["a value to null keeps the value", { ...invoice, status: null }, { status: "DRAFT" }],
    [
      "items count as one field, the recomputed total is included",
      { ...invoice, items: [{ description: "Work", quantity: 2, unitPrice: 10 }], totalAmount: 20 },
      { items: invoice.items, totalAmount: 10 },
    ],
    ["items replaced by equal items are no change", { ...invoice, items: [{ description: "Work", quantity: 1, unitPrice: 10 }] }, {}],
    ["non-ASCII text", { ...invoice, notes: "Grüße 😀" }, { notes: null }],
  ])("%s", (_name, after, expected) => {
    expect(previousAttributes(invoice, after)).toEqual(expected);
  });
});
