// The include cap (issue 16, item 4): a to-many relation in a response holds at most
// INCLUDE_MAX_PER_RELATION records per parent, the newest first, and the parent says when it was
// cut. The cap is set small through configuration here; the code path is the production one.
import { DEFAULT_INCLUDE_MAX_PER_RELATION } from "@crm/contracts";
import { loadConfig } from "../src/config";
import { createClient, sharedHarness, type Caller } from "./harness";

const CAP = 3;
const item = { description: "Work", quantity: 1, unitPrice: 10 };

describe("include cap (PGlite, INCLUDE_MAX_PER_RELATION=3)", () => {
  const h = sharedHarness("pglite", { config: { INCLUDE_MAX_PER_RELATION: String(CAP) } });
  let caller: Caller;

  beforeAll(async () => {
    caller = h.caller();
  });

  async function seed(counts: { invoices: number; quotes: number; contacts: number }) {
    const clientId = await createClient(caller);
    const invoices: string[] = [];
    for (let i = 0; i < counts.invoices; i++) invoices.push((await caller.post("/invoice", { clientId, items: [item] }).expect(201)).body.data.id);
    for (let i = 0; i < counts.quotes; i++) await caller.post("/quote", { clientId, items: [item] }).expect(201);
    const contacts: string[] = [];
    for (let i = 0; i < counts.contacts; i++) {
      contacts.push((await caller.post("/contact", { clientId, type: "EMAIL", value: `c${i}@example.com` }).expect(201)).body.data.id);
    }
    return { clientId, invoices, contacts };
  }

  it("keeps the newest records of a relation beyond the cap and flags it; a relation within the cap is whole and unflagged", async () => {
    const { clientId, invoices, contacts } = await seed({ invoices: 5, quotes: CAP, contacts: 4 });
    const client = (await caller.get(`/client/${clientId}?include=invoices,quotes`).expect(200)).body.data;
    expect(client.invoices.map((i: { id: string }) => i.id)).toEqual(invoices.slice(-CAP).reverse());
    expect(client.invoicesTruncated).toBe(true);
    expect(client.invoices[0].items).toEqual([item]); // each included document is whole
    expect(client.quotes).toHaveLength(CAP);
    expect(client).not.toHaveProperty("quotesTruncated");
    expect(client.contacts.map((c: { id: string }) => c.id)).toEqual(contacts.slice(-CAP).reverse());
    expect(client.contactsTruncated).toBe(true);
  });

  it("applies per parent on a list page, and leaves unrequested relations out", async () => {
    const a = await seed({ invoices: 4, quotes: 0, contacts: 0 });
    const b = await seed({ invoices: 2, quotes: 0, contacts: 0 });
    const page = (await caller.get(`/client?include=invoices,-contacts&where=id:${a.clientId}`).expect(200)).body.data;
    expect(page[0].invoices.map((i: { id: string }) => i.id)).toEqual(a.invoices.slice(-CAP).reverse());
    expect(page[0].invoicesTruncated).toBe(true);
    expect(page[0]).not.toHaveProperty("contacts");
    const list = (await caller.get("/client?include=invoices&perPage=100").expect(200)).body.data as Array<Record<string, unknown>>;
    const byId = new Map(list.map((c) => [c["id"], c]));
    expect((byId.get(a.clientId)!["invoices"] as unknown[]).length).toBe(CAP);
    expect(byId.get(b.clientId)!["invoices"]).toHaveLength(2);
    expect(byId.get(b.clientId)).not.toHaveProperty("invoicesTruncated");
    for (const client of list) expect((client["contacts"] as unknown[]).length).toBeLessThanOrEqual(CAP);
  });

  it("defaults to the documented cap", () => {
    expect(loadConfig({}).INCLUDE_MAX_PER_RELATION).toBe(DEFAULT_INCLUDE_MAX_PER_RELATION);
    expect(DEFAULT_INCLUDE_MAX_PER_RELATION).toBe(100);
    expect(() => loadConfig({ INCLUDE_MAX_PER_RELATION: "0" })).toThrow(/INCLUDE_MAX_PER_RELATION/);
  });
});
