import { entityDefinitions } from "../entities";
import { ifMatchHolds, noneMatchFails, recordEtag } from "./record-etag";

const tag = '"abcdefghijklmnopqrstuv"';

describe("If-Match (strong comparison)", () => {
  it.each([
    [undefined, true],
    [tag, true],
    ["*", true],
    [` ${tag} `, true],
    [`"x", ${tag}`, true],
    [`"x",${tag}`, true],
    [`W/${tag}`, false],
    ['"x"', false],
    ["abcdefghijklmnopqrstuv", false],
    ["", false],
    ["*, *", false],
  ])("%p -> %p", (header, holds) => {
    expect(ifMatchHolds(header, tag)).toBe(holds);
  });
});

describe("If-None-Match (weak comparison)", () => {
  it.each([
    [undefined, false],
    [tag, true],
    [`W/${tag}`, true],
    ["*", true],
    [`"x", W/${tag}`, true],
    ['"x"', false],
    ["garbage", false],
  ])("%p -> not modified %p", (header, notModified) => {
    expect(noneMatchFails(header, tag)).toBe(notModified);
  });
});

describe("recordEtag", () => {
  const client = { id: "1", businessId: "b", firstName: "A", lastName: "B", updatedAt: "2026-01-01T00:00:00.000Z" };
  it("is strong, stable, blind to embedded relations and changes with any field", () => {
    const etag = recordEtag(entityDefinitions.client, client);
    expect(etag).toMatch(/^"[A-Za-z0-9_-]{22}"$/);
    expect(recordEtag(entityDefinitions.client, { ...client, contacts: [{ id: "c" }], contactsTruncated: true })).toBe(etag);
    expect(recordEtag(entityDefinitions.client, { ...client, updatedAt: "2026-01-01T00:00:00.001Z" })).not.toBe(etag);
    expect(recordEtag(entityDefinitions.client, { ...client, lastName: "C" })).not.toBe(etag);
  });
  it("covers an invoice's items", () => {
    const invoice = { id: "1", items: [{ description: "a", quantity: 1, unitPrice: 1 }], totalAmount: 1 };
    expect(recordEtag(entityDefinitions.invoice, invoice)).not.toBe(
      recordEtag(entityDefinitions.invoice, { ...invoice, items: [{ description: "a", quantity: 1, unitPrice: 2 }] }),
    );
  });
});
