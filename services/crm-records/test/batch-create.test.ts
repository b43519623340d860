// Batch create (extensions §E2.2): 1-100 records in one request, all or nothing, one event per
// record in order, the record counts and document numbers kept right. PGlite and PostgreSQL.
import { RECORD_BATCH_MAX_ITEMS, type EventEnvelope } from "@crm/contracts";
import { describePostgres } from "@crm/testing";
import { createClient, sharedHarness, type Caller, type Mode } from "./harness";

function batchSuite(mode: Mode, config: NodeJS.ProcessEnv = {}): void {
  const h = sharedHarness(mode, { config });

  const events = async (caller: Caller) =>
    (await h.prisma.outboxEvent.findMany({ where: { key: caller.businessId }, orderBy: { sequence: "asc" } })).map((r) => r.payload as unknown as EventEnvelope);
  const total = async (caller: Caller, entity: string) => (await caller.get(`/${entity}?perPage=1`)).body.meta.total as number;

  it("creates every item in order, answers them as GET does, and emits one created event each, in order", async () => {
    const caller = h.caller();
    const before = (await events(caller)).length;
    const items = Array.from({ length: 5 }, (_, i) => ({ firstName: `First${i}`, lastName: `Last${i}`, email: `p${i}@example.com` }));
    const res = await caller.post("/client/batch", { items });
    expect(res.status).toBe(201);
    expect(res.body.data.map((c: { firstName: string }) => c.firstName)).toEqual(items.map((i) => i.firstName));
    for (const created of res.body.data) expect((await caller.get(`/client/${created.id}?include=-contacts`)).body.data).toEqual(created);
    const emitted = (await events(caller)).slice(before);
    expect(emitted.map((e) => [e.type, e.data["id"]])).toEqual(res.body.data.map((c: { id: string }) => ["client.created", c.id]));
    expect(emitted.map((e) => e.data)).toEqual(res.body.data);
    expect(await total(caller, "client")).toBe(5);
    // Newest first means the batch's last item first.
    const list = await caller.get("/client?perPage=5");
    expect(list.body.data.map((c: { firstName: string }) => c.firstName)).toEqual(items.map((i) => i.firstName).reverse());
  });

  it("numbers invoices in item order with their items and totals; quotes too", async () => {
    const caller = h.caller();
    const clientId = await createClient(caller);
    await caller.post("/invoice", { clientId, items: [{ description: "first", quantity: 1, unitPrice: 1 }] });
    const res = await caller.post("/invoice/batch", {
      items: [
        { clientId, items: [{ description: "a", quantity: 2, unitPrice: 1.5 }] },
        {
          clientId,
          status: "SENT",
          items: [
            { description: "b", quantity: 1, unitPrice: 10 },
            { description: "c", quantity: 3, unitPrice: 0.1 },
          ],
        },
      ],
    });
    expect(res.status).toBe(201);
    expect(res.body.data.map((i: { number: string; totalAmount: number }) => [i.number, i.totalAmount])).toEqual([
      ["INV-000002", 3],
      ["INV-000003", 10.3],
    ]);
    for (const created of res.body.data) expect((await caller.get(`/invoice/${created.id}`)).body.data).toEqual(created);
    expect(await total(caller, "invoice")).toBe(3);
    const quotes = await caller.post("/quote/batch", { items: [{ clientId, items: [{ description: "q", quantity: 1, unitPrice: 1 }] }] });
    expect(quotes.body.data[0].number).toBe("QUO-000001");
  });

  it("one invalid item: 400001 naming items.<i>.<field>, nothing created, no event", async () => {
    const caller = h.caller();
    const before = (await events(caller)).length;
    const res = await caller.post("/client/batch", {
      items: [
        { firstName: "Ok", lastName: "One" },
        { firstName: "Ok", lastName: "Two" },
        { firstName: "", id: "x" },
        { lastName: "Ok", email: "not-an-email" },
      ],
    });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe(400001);
    const paths = res.body.error.details.map((d: { path: string }) => d.path);
    expect(paths).toEqual(expect.arrayContaining(["items.2.id", "items.2.lastName", "items.3.firstName", "items.3.email"]));
    expect(paths.every((p: string) => /^items\.[23]\./.test(p))).toBe(true);
    expect(await total(caller, "client")).toBe(0);
    expect((await events(caller)).length).toBe(before);

    const nested = await caller.post("/invoice/batch", { items: [{ clientId: await createClient(caller), items: [{ description: "x", quantity: -1, unitPrice: 1 }] }] });
    expect(nested.body.error.details.map((d: { path: string }) => d.path)).toEqual(["items.0.items.0.quantity"]);
    const notObject = await caller.post("/client/batch", { items: [{ firstName: "A", lastName: "B" }, 7] });
    expect(notObject.body.error.details).toEqual([{ path: "items.1", message: "Expected a JSON object" }]);
  });

  it("an unknown or foreign client on one item: 400001 at items.<i>.clientId, nothing created, numbers given back", async () => {
    const caller = h.caller();
    const stranger = h.caller();
    const mine = await createClient(caller);
    const theirs = await createClient(stranger);
    const before = (await events(caller)).length;
    for (const entity of ["contact", "invoice"]) {
      const item = (clientId: string) =>
        entity === "contact" ? { clientId, type: "EMAIL", value: "x@example.com" } : { clientId, items: [{ description: "x", quantity: 1, unitPrice: 1 }] };
      const res = await caller.post(`/${entity}/batch`, { items: [item(mine), item(theirs), item(mine), item("not-a-uuid")] });
      expect(res.status).toBe(400);
      expect(res.body.error).toEqual({
        code: 400001,
        message: "Validation failed",
        details: [
          { path: "items.1.clientId", message: "Unknown client" },
          { path: "items.3.clientId", message: "Unknown client" },
        ],
      });
      expect(await total(caller, entity)).toBe(0);
    }
    expect((await events(caller)).length).toBe(before);
    const next = await caller.post("/invoice", { clientId: mine, items: [{ description: "x", quantity: 1, unitPrice: 1 }] });
    expect(next.body.data.number).toBe("INV-000001");
  });

  it("a failure at the database on a later item rolls back the earlier ones, their events, count and numbers", async () => {
    const caller = h.caller();
    const clientId = await createClient(caller);
    // A row holding the number the batch's second invoice will draw (a state the API cannot make).
    await h.prisma.invoice.create({ data: { id: crypto.randomUUID(), businessId: caller.businessId, clientId, number: "INV-000002", totalAmount: "0" } });
    const before = (await events(caller)).length;
    const line = { description: "x", quantity: 1, unitPrice: 1 };
    const res = await caller.post("/invoice/batch", {
      items: [
        { clientId, items: [line] },
        { clientId, items: [line] },
      ],
    });
    expect(res.status).toBe(500);
    expect(await h.prisma.invoice.count({ where: { businessId: caller.businessId } })).toBe(1);
    expect((await events(caller)).length).toBe(before);
    expect(await total(caller, "invoice")).toBe(0); // the seeded row was never counted; the batch added nothing
    const next = await caller.post("/invoice", { clientId, items: [line] });
    expect(next.body.data.number).toBe("INV-000001");
  });

  it("refuses an empty, oversized, missing or non-array items, and other fields beside it", async () => {
    const caller = h.caller();
    const one = { firstName: "A", lastName: "B" };
    const cases: Array<[unknown, string]> = [
      [{ items: [] }, "items"],
      [{ items: Array.from({ length: RECORD_BATCH_MAX_ITEMS + 1 }, () => one) }, "items"],
      [{}, "items"],
      [{ items: one }, "items"],
      [{ items: [one], extra: 1 }, "extra"],
    ];
    for (const [body, path] of cases) {
      const res = await caller.post("/client/batch", body as object);
      expect([res.status, res.body.error.code, res.body.error.details[0].path]).toEqual([400, 400001, path]);
    }
    expect(await total(caller, "client")).toBe(0);
  });

  it("takes 100 items, and needs the entity's create permission", async () => {
    const caller = h.caller();
    const res = await caller.post("/product/batch", { items: Array.from({ length: RECORD_BATCH_MAX_ITEMS }, (_, i) => ({ name: `P${i}`, unitPrice: i })) });
    expect(res.status).toBe(201);
    expect(res.body.data).toHaveLength(100);
    expect(await total(caller, "product")).toBe(100);
    expect((await events(caller)).filter((e) => e.type === "product.created")).toHaveLength(100);
    const readOnly = h.caller({ permissions: ["products.read", "clients.create"] });
    expect((await readOnly.post("/product/batch", { items: [{ name: "x", unitPrice: 1 }] })).body.error.code).toBe(401014);
  });
}

describe("batch create on PGlite", () => batchSuite("pglite"));
describePostgres("batch create on PostgreSQL", () => batchSuite("postgres"));
describePostgres("batch create on PostgreSQL, creates in a transaction (D14 off)", () => batchSuite("postgres", { RECORDS_ONE_STATEMENT_CREATES: "false" }));
