// A create writes every column itself (record-insert.ts), taking omitted fields' values from the
// entity definition instead of the database's DEFAULTs. This holds the two together: for each entity,
// a create with only the required fields answers, stores and announces exactly the row a GET reads.
import type { EventEnvelope, RecordEntity } from "@crm/contracts";
import { describePostgres } from "@crm/testing";
import { createClient, sharedHarness, type Mode } from "./harness";

function suite(mode: Mode, config: NodeJS.ProcessEnv = {}) {
  const h = sharedHarness(mode, { config });

  it.each<[RecordEntity, (clientId: string) => object]>([
    ["client", () => ({ firstName: "Ada", lastName: "Lovelace" })],
    ["contact", (clientId) => ({ clientId, type: "EMAIL", value: "ada@example.com" })],
    ["product", () => ({ name: "Widget" })],
    ["service", () => ({ name: "Consulting" })],
    ["employee", () => ({ firstName: "Grace", lastName: "Hopper" })],
    ["invoice", (clientId) => ({ clientId, items: [{ description: "Work", quantity: 1, unitPrice: 2.5 }] })],
    ["quote", (clientId) => ({ clientId, items: [{ description: "Work", quantity: 1, unitPrice: 2.5 }] })],
  ])("%s: the create response, the stored row and the event agree", async (entity, body) => {
    const caller = h.caller();
    const clientId = await createClient(caller);
    const created = await caller.post(`/${entity}`, body(clientId));
    expect(created.status).toBe(201);
    // A client's GET carries its contacts by default; the create response has no relations.
    const read = await caller.get(`/${entity}/${created.body.data.id}${entity === "client" ? "?include=-contacts" : ""}`);
    expect(read.status).toBe(200);
    expect(created.body.data).toEqual(read.body.data);
    const row = await h.prisma.outboxEvent.findFirst({ where: { key: caller.businessId, payload: { path: ["data", "id"], equals: created.body.data.id } } });
    expect((row!.payload as unknown as EventEnvelope).data).toEqual(read.body.data);
  });

  it("a contact for another business's client or an unknown one is 400001 at clientId, and nothing is written", async () => {
    const other = h.caller();
    const foreignClient = await createClient(other);
    const caller = h.caller();
    for (const clientId of [foreignClient, "0193a4b2-7c5d-7e8f-9a0b-1c2d3e4f5a6b"]) {
      const res = await caller.post("/contact", { clientId, type: "EMAIL", value: "x@example.com" });
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe(400001);
      expect(res.body.error.details).toEqual([{ path: "clientId", message: "Unknown client" }]);
    }
    const list = await caller.get("/contact");
    expect(list.body.meta.total).toBe(0);
    expect(await h.prisma.outboxEvent.count({ where: { key: caller.businessId } })).toBe(0);
  });
}

describe("create defaults on PGlite", () => suite("pglite"));
describePostgres("create defaults on PostgreSQL", () => suite("postgres"));
describePostgres("create defaults on PostgreSQL, creates in a transaction (D14 off)", () => suite("postgres", { RECORDS_ONE_STATEMENT_CREATES: "false" }));
