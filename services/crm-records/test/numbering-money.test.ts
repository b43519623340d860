// Invoice/quote numbers under concurrency, and exact money over HTTP.
import { describePostgres } from "@crm/testing";
import { createClient, sharedHarness, type Caller, type Mode } from "./harness";

function numberingSuite(mode: Mode) {
  const h = sharedHarness(mode);
  let caller: Caller;
  let clientId: string;

  beforeAll(async () => {
    caller = h.caller();
    clientId = await createClient(caller);
  });

  it("gives 20 parallel invoice creates in one business 20 distinct consecutive numbers", async () => {
    const responses = await Promise.all(
      Array.from({ length: 20 }, (_, i) => caller.post("/invoice", { clientId, items: [{ description: `Line ${i}`, quantity: 1, unitPrice: i }] })),
    );
    expect(responses.map((r) => r.status)).toEqual(Array(20).fill(201));
    const numbers = responses.map((r) => r.body.data.number as string).sort();
    expect(numbers).toEqual(Array.from({ length: 20 }, (_, i) => `INV-${String(i + 1).padStart(6, "0")}`));
    // A failed create (unknown client) does not consume a number: the sequence stays gap-free.
    await caller.post("/invoice", { clientId: "0193a0c4-0000-7000-8000-000000000000", items: [{ description: "x", quantity: 1, unitPrice: 1 }] }).expect(400);
    const next = await caller.post("/invoice", { clientId, items: [{ description: "x", quantity: 1, unitPrice: 1 }] }).expect(201);
    expect(next.body.data.number).toBe("INV-000021");
    const quote = await caller.post("/quote", { clientId, items: [{ description: "x", quantity: 1, unitPrice: 1 }] }).expect(201);
    expect(quote.body.data.number).toBe("QUO-000001");
  });

  it.each<[string, Array<{ quantity: number; unitPrice: number }>, number]>([
    ["0.005 rounds half-up to 0.01", [{ quantity: 1, unitPrice: 0.005 }], 0.01],
    ["0.0049 rounds down to 0", [{ quantity: 1, unitPrice: 0.0049 }], 0],
    ["1.0049 x 1 = 1.0049 -> 1.00", [{ quantity: 1.0049, unitPrice: 1 }], 1],
    ["1.0049 x 1.0049 = 1.00982401 -> 1.01", [{ quantity: 1.0049, unitPrice: 1.0049 }], 1.01],
    ["1.005 x 1 -> 1.01 (binary floats say 1.00)", [{ quantity: 1, unitPrice: 1.005 }], 1.01],
    [
      "rounded once over the sum: 3 x 0.005 -> 0.02",
      [
        { quantity: 1, unitPrice: 0.005 },
        { quantity: 1, unitPrice: 0.005 },
        { quantity: 1, unitPrice: 0.005 },
      ],
      0.02,
    ],
    [
      "0.1 + 0.2 = 0.3 exactly",
      [
        { quantity: 1, unitPrice: 0.1 },
        { quantity: 1, unitPrice: 0.2 },
      ],
      0.3,
    ],
    ["4 decimals on both sides", [{ quantity: 2.5005, unitPrice: 3.9999 }], 10.0],
  ])("totalAmount: %s", async (_name, lines, expected) => {
    const items = lines.map((l) => ({ description: "line", ...l }));
    const res = await caller.post("/invoice", { clientId, items }).expect(201);
    expect(res.body.data.totalAmount).toBe(expected);
    expect(res.body.data.items).toEqual(items);
    const got = await caller.get(`/invoice/${res.body.data.id}`).expect(200);
    expect(got.body.data.totalAmount).toBe(expected);
    // Updating the items recomputes the total; other updates keep it.
    const updated = await caller.patch(`/invoice/${res.body.data.id}`, { items: [{ description: "x", quantity: 3, unitPrice: 0.3333 }] }).expect(200);
    expect(updated.body.data.totalAmount).toBe(1);
    const status = await caller.put(`/invoice/${res.body.data.id}`, { status: "PAID" }).expect(200);
    expect(status.body.data).toMatchObject({ totalAmount: 1, status: "PAID" });
  });

  it("allows at most 4 decimal places on quantity and unitPrice", async () => {
    for (const [line, path] of [
      [{ quantity: 1.00001, unitPrice: 1 }, "items.0.quantity"],
      [{ quantity: 1, unitPrice: 0.00001 }, "items.0.unitPrice"],
      [{ quantity: 0, unitPrice: 1 }, "items.0.quantity"],
      [{ quantity: 1, unitPrice: -0.01 }, "items.0.unitPrice"],
      [{ quantity: "1", unitPrice: 1 }, "items.0.quantity"],
      [{ quantity: 1e12, unitPrice: 1 }, "items.0.quantity"],
    ] as const) {
      const res = await caller.post("/quote", { clientId, items: [{ description: "x", ...line }] }).expect(400);
      expect([res.body.error.code, res.body.error.details.map((d: { path: string }) => d.path)]).toEqual([400001, [path]]);
    }
    const ok = await caller.post("/quote", { clientId, items: [{ description: "x", quantity: 0.0001, unitPrice: 99999999999.9999 }] }).expect(201);
    expect(ok.body.data.totalAmount).toBe(10000000);
    expect(ok.body.data.items[0]).toMatchObject({ quantity: 0.0001, unitPrice: 99999999999.9999 });
  });

  it("filters invoices on totalAmount and status", async () => {
    const res = await caller.get("/invoice?where=totalAmount:gte:1,status:PAID&perPage=100").expect(200);
    expect(res.body.data.length).toBeGreaterThan(0);
    expect(res.body.data.every((i: { totalAmount: number; status: string }) => i.totalAmount >= 1 && i.status === "PAID")).toBe(true);
    const cast = await caller.get("/invoice?where=totalAmount:lt:float(0.02)&perPage=100").expect(200);
    expect(cast.body.data.every((i: { totalAmount: number }) => i.totalAmount < 0.02)).toBe(true);
  });
}

describePostgres("numbering and money on PostgreSQL", () => numberingSuite("postgres"));
describe("numbering and money on PGlite", () => numberingSuite("pglite"));
