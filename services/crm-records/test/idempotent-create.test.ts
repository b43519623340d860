// A create sent with an Idempotency-Key claims its key in its own write (issue 42): when the gateway
// could not keep the first answer (its outcome was unknown, or Redis lost it), the retry reaches this
// service again and is answered with what the first run created, never created twice. PGlite and PostgreSQL.
import { testInfra } from "@crm/testing";
import { CLAIM_RETENTION_MS, idempotentCreateRetentionRule } from "../src/persistence/idempotent-create";
import { createClient, sharedHarness, type Caller, type Mode } from "./harness";

const modes: Mode[] = testInfra.databaseUrl ? ["pglite", "postgres"] : ["pglite"];

describe.each(modes)("idempotent creates on %s", (mode) => {
  jest.setTimeout(60_000);
  const h = sharedHarness(mode);
  const total = async (caller: Caller, entity: string) => (await caller.get(`/${entity}?perPage=1`)).body.meta.total as number;

  it("answers a retried create with the record the first run made, marked replayed, and creates nothing more", async () => {
    const caller = h.caller();
    const body = { firstName: "Ada", lastName: "Lovelace" };
    const first = await caller.post("/client", body).set("Idempotency-Key", "create-1");
    expect(first.status).toBe(201);
    expect(first.headers["idempotent-replayed"]).toBeUndefined();
    const again = await caller.post("/client", body).set("Idempotency-Key", "create-1");
    expect(again.status).toBe(201);
    expect(again.headers["idempotent-replayed"]).toBe("true");
    expect(again.body.data).toEqual(first.body.data);
    expect(again.headers["etag"]).toBe(first.headers["etag"]);
    expect(await total(caller, "client")).toBe(1);
    expect(await h.prisma.outboxEvent.count({ where: { key: caller.businessId } })).toBe(1);
    // Without a key, or with another, a second create is a second record.
    await caller.post("/client", body).set("Idempotency-Key", "create-2").expect(201);
    await caller.post("/client", body).expect(201);
    expect(await total(caller, "client")).toBe(3);
  });

  it("refuses the key with another body, another caller of the business, or another route: 409002, nothing created", async () => {
    const caller = h.caller();
    await caller.post("/client", { firstName: "A", lastName: "B" }).set("Idempotency-Key", "k").expect(201);
    const otherBody = await caller.post("/client", { firstName: "A", lastName: "C" }).set("Idempotency-Key", "k");
    expect([otherBody.status, otherBody.body.error.code]).toEqual([409, 409002]);
    const otherCaller = await h.caller({ businessId: caller.businessId }).post("/client", { firstName: "A", lastName: "B" }).set("Idempotency-Key", "k");
    expect([otherCaller.status, otherCaller.body.error.code]).toEqual([409, 409002]);
    expect(JSON.stringify(otherCaller.body)).not.toContain("Lovelace");
    const otherRoute = await caller.post("/client/batch", { items: [{ firstName: "A", lastName: "B" }] }).set("Idempotency-Key", "k");
    expect([otherRoute.status, otherRoute.body.error.code]).toEqual([409, 409002]);
    expect(await total(caller, "client")).toBe(1);
    // Another business's same key is its own.
    await h.caller().post("/client", { firstName: "A", lastName: "B" }).set("Idempotency-Key", "k").expect(201);
  });

  it("replays invoices (created in a transaction with their number and items) and batches", async () => {
    const caller = h.caller();
    const clientId = await createClient(caller);
    const invoice = { clientId, items: [{ description: "work", quantity: 2, unitPrice: 10 }] };
    const first = await caller.post("/invoice", invoice).set("Idempotency-Key", "inv").expect(201);
    const again = await caller.post("/invoice", invoice).set("Idempotency-Key", "inv").expect(201);
    expect(again.headers["idempotent-replayed"]).toBe("true");
    expect(again.body.data).toEqual(first.body.data);
    expect(await total(caller, "invoice")).toBe(1);

    const items = [
      { firstName: "B1", lastName: "L" },
      { firstName: "B2", lastName: "L" },
    ];
    const batch = await caller.post("/client/batch", { items }).set("Idempotency-Key", "batch").expect(201);
    const batchAgain = await caller.post("/client/batch", { items }).set("Idempotency-Key", "batch").expect(201);
    expect(batchAgain.body.data).toEqual(batch.body.data);
    expect(await total(caller, "client")).toBe(3);
  });

  it("does not answer a replay of a record deleted since (409002), and a failed create claims nothing", async () => {
    const caller = h.caller();
    const created = await caller.post("/client", { firstName: "A", lastName: "B" }).set("Idempotency-Key", "gone").expect(201);
    await caller.delete(`/client/${created.body.data.id}`).expect(200);
    const again = await caller.post("/client", { firstName: "A", lastName: "B" }).set("Idempotency-Key", "gone");
    expect([again.status, again.body.error.code]).toEqual([409, 409002]);

    await caller.post("/contact", { type: "PHONE", value: "1", clientId: "00000000-0000-7000-8000-000000000000" }).set("Idempotency-Key", "bad").expect(400);
    const clientId = await createClient(caller);
    await caller.post("/contact", { type: "PHONE", value: "1", clientId }).set("Idempotency-Key", "bad").expect(201);
  });

  it("forgets claims after the gateway would have forgotten the answer", async () => {
    const caller = h.caller();
    await caller.post("/client", { firstName: "A", lastName: "B" }).set("Idempotency-Key", "old").expect(201);
    const rule = idempotentCreateRetentionRule(h.prisma);
    const count = () => h.prisma.idempotentCreate.count({ where: { businessId: caller.businessId } });
    await rule.deleteBatch(1_000, new Date(Date.now() + CLAIM_RETENTION_MS - 60_000));
    expect(await count()).toBe(1);
    await rule.deleteBatch(1_000, new Date(Date.now() + CLAIM_RETENTION_MS + 60_000));
    expect(await count()).toBe(0);
  });
});
