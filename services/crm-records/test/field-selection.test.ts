// Field selection (extensions §E8) through the HTTP API: `fields` on one record, on lists and beside a
// cursor; `id` always; `<relation>.<field>` for an included relation; strict names (400019 at
// `fields`); permissions as for include (§E10); the ETag of the whole record whatever is selected.
import { describePostgres } from "@crm/testing";
import { createClient, sharedHarness, type Mode } from "./harness";

const item = { description: "Work", quantity: 2, unitPrice: 10 };

function suite(mode: Mode) {
  const h = sharedHarness(mode);

  it("answers one record with the named fields and id, under the whole record's ETag", async () => {
    const caller = h.caller();
    const clientId = await createClient(caller, { email: "ada@example.com" });
    const whole = await caller.get(`/client/${clientId}`).expect(200);
    const selected = await caller.get(`/client/${clientId}?fields=firstName,email`).expect(200);
    expect(selected.body.data).toEqual({ id: clientId, firstName: "Ada", email: "ada@example.com" });
    expect(selected.headers["etag"]).toBe(whole.headers["etag"]);
    await caller
      .get(`/client/${clientId}?fields=firstName`)
      .set("If-None-Match", whole.headers["etag"] as string)
      .expect(304);
    expect((await caller.get(`/client/${clientId}?fields=id`).expect(200)).body.data).toEqual({ id: clientId });
  });

  it("selects fields of included relations' records, each keeping its id", async () => {
    const caller = h.caller();
    const clientId = await createClient(caller, { lastName: "Byron" });
    const contact = (await caller.post("/contact", { clientId, type: "EMAIL", value: "a@example.com" }).expect(201)).body.data;
    const invoice = (await caller.post("/invoice", { clientId, items: [item] }).expect(201)).body.data;
    expect((await caller.get(`/client/${clientId}?fields=lastName,contacts.value`).expect(200)).body.data).toEqual({
      id: clientId,
      lastName: "Byron",
      contacts: [{ id: contact.id, value: "a@example.com" }],
    });
    // A default relation none of whose fields is named is left out of the answer.
    expect((await caller.get(`/client/${clientId}?fields=lastName`).expect(200)).body.data).toEqual({ id: clientId, lastName: "Byron" });
    expect((await caller.get(`/invoice/${invoice.id}?include=client&fields=number,items,client.lastName`).expect(200)).body.data).toEqual({
      id: invoice.id,
      number: invoice.number,
      items: [item],
      client: { id: clientId, lastName: "Byron" },
    });
    const listed = await caller.get(`/invoice?include=client&fields=totalAmount,client.lastName`).expect(200);
    expect(listed.body.data).toEqual([{ id: invoice.id, totalAmount: 20, client: { id: clientId, lastName: "Byron" } }]);
  });

  it("selects fields on list pages, by offset and beside a cursor", async () => {
    const caller = h.caller();
    const ids: string[] = [];
    for (const firstName of ["A", "B", "C"]) ids.unshift(await createClient(caller, { firstName }));
    const first = await caller.get("/client?perPage=2&fields=firstName").expect(200);
    expect(first.body.data).toEqual([
      { id: ids[0], firstName: "C" },
      { id: ids[1], firstName: "B" },
    ]);
    expect(first.body.meta.total).toBe(3);
    const next = await caller.get(`/client?perPage=2&fields=firstName,lastName&cursor=${encodeURIComponent(first.body.meta.nextCursor)}`).expect(200);
    expect(next.body.data).toEqual([{ id: ids[2], firstName: "A", lastName: "Lovelace" }]);
  });

  it("refuses an empty list, an unknown name or a relation the answer does not include: 400019 at fields", async () => {
    const caller = h.caller();
    const clientId = await createClient(caller);
    const tooMany = Array.from({ length: 101 }, () => "firstName").join(",");
    for (const query of [
      "fields=",
      "fields=firstName,",
      "fields=nope",
      "fields=contacts",
      "fields=contacts.nope",
      "fields=invoices.number",
      "include=-contacts&fields=contacts.value",
      "fields=customFields.tier",
      "fields=firstName&fields=lastName",
      `fields=${tooMany}`,
      `fields=${"x".repeat(2001)}`,
    ]) {
      for (const url of [`/client/${clientId}?${query}`, `/client?${query}`]) {
        const res = await caller.get(url);
        expect([url, res.status, res.body.error?.code, res.body.error?.details?.[0]?.path]).toEqual([url, 400, 400019, "fields"]);
      }
    }
  });

  it("obeys permissions as include does: a relation's fields need its read permission (401014)", async () => {
    const caller = h.caller();
    const clientId = await createClient(caller);
    await caller.post("/contact", { clientId, type: "EMAIL", value: "a@example.com" }).expect(201);
    const reader = h.caller({ businessId: caller.businessId, permissions: ["clients.read"] });
    expect((await reader.get(`/client/${clientId}?fields=firstName,contacts.value`).expect(401)).body.error.code).toBe(401014);
    expect((await reader.get(`/client?fields=firstName,contacts.value`).expect(401)).body.error.code).toBe(401014);
    expect((await reader.get(`/client/${clientId}?fields=firstName`).expect(200)).body.data).toEqual({ id: clientId, firstName: "Ada" });
  });
}

describe("field selection on PGlite", () => suite("pglite"));
describePostgres("field selection on PostgreSQL", () => suite("postgres"));
