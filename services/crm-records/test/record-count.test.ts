// The unfiltered list's `meta.total` comes from counts kept in the writing transactions (issue 9):
// it must stay exactly the number of records through creates, deletes, cascades, refused deletes
// and concurrent creates, per business and per entity.
import { describePostgres } from "@crm/testing";
import { createClient, sharedHarness, type Caller, type Mode } from "./harness";

const item = { description: "Work", quantity: 1, unitPrice: 100 };

function recordCountSuite(mode: Mode, config: NodeJS.ProcessEnv = {}) {
  const h = sharedHarness(mode, { config });

  async function totals(caller: Caller, entity: string): Promise<{ unfiltered: number; filtered: number }> {
    const unfiltered = (await caller.get(`/${entity}?perPage=1`).expect(200)).body.meta.total as number;
    // A filter every record matches: counted by the database, the reference figure.
    const filtered = (await caller.get(`/${entity}?perPage=1&where=createdAt:gte:date(2000-01-01)`).expect(200)).body.meta.total as number;
    return { unfiltered, filtered };
  }

  it("stays exact through creates, deletes, cascades and refused deletes, per business and entity", async () => {
    const a = h.caller();
    const b = h.caller();
    expect(await totals(a, "client")).toEqual({ unfiltered: 0, filtered: 0 });
    const clients = [await createClient(a), await createClient(a), await createClient(a)];
    await createClient(b);
    for (const clientId of clients.slice(0, 2)) {
      await a.post("/contact", { clientId, type: "EMAIL", value: "x@example.com" }).expect(201);
      await a.post("/contact", { clientId, type: "PHONE", value: "+1 555 0100" }).expect(201);
    }
    await a.post("/invoice", { clientId: clients[2], items: [item] }).expect(201);
    expect(await totals(a, "client")).toEqual({ unfiltered: 3, filtered: 3 });
    expect(await totals(a, "contact")).toEqual({ unfiltered: 4, filtered: 4 });
    expect(await totals(b, "client")).toEqual({ unfiltered: 1, filtered: 1 });

    await a.delete(`/client/${clients[0]}`).expect(200); // and its two contacts
    await a.delete(`/client/${clients[2]}`).expect(409); // has an invoice: nothing changes
    await a.delete(`/client/${clients[0]}`).expect(404);
    expect(await totals(a, "client")).toEqual({ unfiltered: 2, filtered: 2 });
    expect(await totals(a, "contact")).toEqual({ unfiltered: 2, filtered: 2 });
    expect(await totals(a, "invoice")).toEqual({ unfiltered: 1, filtered: 1 });
    expect(await totals(b, "contact")).toEqual({ unfiltered: 0, filtered: 0 });
  });

  it("counts every one of many concurrent creates in one business", async () => {
    const a = h.caller();
    await Promise.all(Array.from({ length: 20 }, (_, i) => a.post("/product", { name: `P${i}` }).expect(201)));
    expect(await totals(a, "product")).toEqual({ unfiltered: 20, filtered: 20 });
  });
}

describe("record counts on PGlite", () => recordCountSuite("pglite"));
describePostgres("record counts on PostgreSQL", () => recordCountSuite("postgres"));
describePostgres("record counts on PostgreSQL, rows counted (D16 off)", () => recordCountSuite("postgres", { RECORDS_COUNT_SLOTS: "false" }));
