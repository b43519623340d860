// Two businesses: every operation of B against A's ids and relations finds nothing (404001),
// sees nothing in lists and includes, and cannot reference A's clients (400001 at clientId).
import { describePostgres } from "@crm/testing";
import { createClient, sharedHarness, type Caller, type Mode } from "./harness";

const NOT_FOUND = { success: false, error: { code: 404001, message: "Resource not found" } };
const item = { description: "Work", quantity: 1, unitPrice: 100 };

function tenancySuite(mode: Mode) {
  const h = sharedHarness(mode);
  let a: Caller;
  let b: Caller;
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    a = h.caller();
    b = h.caller();
    ids["client"] = await createClient(a, { email: "a@example.com" });
    const bodies: Record<string, object> = {
      contact: { clientId: ids["client"], type: "EMAIL", value: "a@example.com" },
      invoice: { clientId: ids["client"], items: [item] },
      quote: { clientId: ids["client"], items: [item] },
      product: { name: "A product" },
      service: { name: "A service" },
      employee: { firstName: "A", lastName: "Employee" },
    };
    for (const [entity, body] of Object.entries(bodies)) ids[entity] = (await a.post(`/${entity}`, body).expect(201)).body.data.id;
  });

  it("B gets, updates and deletes none of A's records (404001, never 403), and A's stay unchanged", async () => {
    for (const [entity, id] of Object.entries(ids)) {
      const before = (await a.get(`/${entity}/${id}`).expect(200)).body.data;
      for (const res of [
        await b.get(`/${entity}/${id}`),
        await b.get(`/${entity}/${id}${entity === "client" ? "?include=invoices" : ["contact", "invoice", "quote"].includes(entity) ? "?include=client" : ""}`),
        await b.patch(`/${entity}/${id}`, {}),
        await b.put(`/${entity}/${id}`, {}),
        await b.delete(`/${entity}/${id}`),
      ]) {
        expect([entity, res.status, res.body]).toEqual([entity, 404, NOT_FOUND]);
      }
      expect((await a.get(`/${entity}/${id}`).expect(200)).body.data).toEqual(before);
    }
  });

  it("B's lists never show A's records, whatever the filter", async () => {
    for (const [entity, id] of Object.entries(ids)) {
      for (const where of ["", `&where=id:${id}`, `&where=businessId:${a.businessId}`, `&where=OR:[id:${id},NOT:id:${id}]`]) {
        const res = await b.get(`/${entity}?perPage=100${where}`).expect(200);
        expect([entity, where, res.body.data, res.body.meta.total]).toEqual([entity, where, [], 0]);
      }
      const own = await a.get(`/${entity}?where=id:${id}`).expect(200);
      expect(own.body.meta.total).toBe(1);
    }
  });

  it("B cannot point a contact, invoice or quote at A's client, on create or update", async () => {
    const bClient = await createClient(b);
    const bodies: Record<string, object> = {
      contact: { type: "PHONE", value: "1" },
      invoice: { items: [item] },
      quote: { items: [item] },
    };
    for (const [entity, body] of Object.entries(bodies)) {
      const refused = await b.post(`/${entity}`, { ...body, clientId: ids["client"] }).expect(400);
      expect(refused.body.error.code).toBe(400001);
      expect(refused.body.error.details[0].path).toBe("clientId");
      const own = (await b.post(`/${entity}`, { ...body, clientId: bClient }).expect(201)).body.data;
      const moved = await b.patch(`/${entity}/${own.id}`, { clientId: ids["client"] }).expect(400);
      expect(moved.body.error.details[0].path).toBe("clientId");
    }
    // B's includes show only B's relations; A's client still has exactly its own.
    const bView = (await b.get(`/client/${bClient}?include=invoices,quotes`).expect(200)).body.data;
    expect([bView.contacts.length, bView.invoices.length, bView.quotes.length]).toEqual([1, 1, 1]);
    const aView = (await a.get(`/client/${ids["client"]}?include=invoices,quotes`).expect(200)).body.data;
    expect(aView.contacts.map((c: { id: string }) => c.id)).toEqual([ids["contact"]]);
    expect(aView.invoices.map((i: { id: string }) => i.id)).toEqual([ids["invoice"]]);
    expect(aView.quotes.map((q: { id: string }) => q.id)).toEqual([ids["quote"]]);
  });

  it("numbers invoices per business", async () => {
    const bClient = await createClient(b);
    const first = await b.post("/quote", { clientId: bClient, items: [item] }).expect(201);
    expect(first.body.data.number).toBe("QUO-000002"); // B's first quote was created above
    const aSecond = await a.post("/invoice", { clientId: ids["client"], items: [item] }).expect(201);
    expect(aSecond.body.data.number).toBe("INV-000002");
  });

  it("rejects businessId in a body instead of honouring it", async () => {
    const res = await b.post("/product", { name: "Sneaky", businessId: a.businessId }).expect(400);
    expect(res.body.error.code).toBe(400001);
    expect(res.body.error.details).toEqual([{ path: "businessId", message: expect.any(String) }]);
    const list = await a.get("/product?where=name:Sneaky").expect(200);
    expect(list.body.meta.total).toBe(0);
  });
}

describe("tenancy on PGlite", () => tenancySuite("pglite"));
describePostgres("tenancy on PostgreSQL", () => tenancySuite("postgres"));
