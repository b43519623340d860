// Conditional requests (extensions §E2.3): ETag on every single-record answer, If-None-Match -> 304,
// If-Match on PATCH/PUT/DELETE -> 412000 with nothing changed and no event. PGlite and PostgreSQL.
import { describePostgres } from "@crm/testing";
import { createClient, sharedHarness, type Caller, type Mode } from "./harness";

const STRONG = /^"[A-Za-z0-9_-]{22}"$/;

function conditionalSuite(mode: Mode): void {
  const h = sharedHarness(mode);

  const events = (caller: Caller) => h.prisma.outboxEvent.count({ where: { key: caller.businessId } });

  it("GET answers a strong ETag, the same for every read and include, and the one create answered", async () => {
    const caller = h.caller();
    const created = await caller.post("/client", { firstName: "Ada", lastName: "Lovelace" });
    expect(created.headers["etag"]).toMatch(STRONG);
    const first = await caller.get(`/client/${created.body.data.id}`);
    expect(first.status).toBe(200);
    expect(first.headers["etag"]).toBe(created.headers["etag"]);
    expect((await caller.get(`/client/${created.body.data.id}`)).headers["etag"]).toBe(first.headers["etag"]);
    // Relations embedded by include are records of their own: the client's ETag is the client's.
    await caller.post("/contact", { clientId: created.body.data.id, type: "EMAIL", value: "ada@example.com" });
    const withContacts = await caller.get(`/client/${created.body.data.id}?include=contacts,invoices`);
    expect(withContacts.body.data.contacts).toHaveLength(1);
    expect(withContacts.headers["etag"]).toBe(first.headers["etag"]);
  });

  it("every entity's create answers the ETag its GET answers", async () => {
    const caller = h.caller();
    const clientId = await createClient(caller);
    const item = { description: "Work", quantity: 1.25, unitPrice: 9.99 };
    const bodies = {
      client: { firstName: "Eve", lastName: "Etag", email: "eve@example.com" },
      contact: { clientId, type: "EMAIL", value: "eve@example.com" },
      invoice: { clientId, items: [item] },
      quote: { clientId, items: [item] },
      product: { name: "Widget", unitPrice: 12.5 },
      service: { name: "Support", unitPrice: 80 },
      employee: { firstName: "Eve", lastName: "Etag" },
    };
    for (const [entity, body] of Object.entries(bodies)) {
      const created = await caller.post(`/${entity}`, body);
      expect(created.status).toBe(201);
      const got = await caller.get(`/${entity}/${created.body.data.id}`);
      expect([entity, got.headers["etag"]]).toEqual([entity, created.headers["etag"]]);
    }
  });

  it("If-None-Match with the current ETag (strong, weak, in a list, or *) is 304 with no body; a stale one is 200", async () => {
    const caller = h.caller();
    const id = await createClient(caller);
    const etag = (await caller.get(`/client/${id}`)).headers["etag"] as string;
    for (const header of [etag, `W/${etag}`, `"other", ${etag}`, "*"]) {
      const res = await caller.get(`/client/${id}`).set("if-none-match", header);
      expect(res.status).toBe(304);
      expect(res.text).toBe("");
      expect(res.headers["etag"]).toBe(etag);
    }
    await caller.patch(`/client/${id}`, { notes: "changed" });
    const stale = await caller.get(`/client/${id}`).set("if-none-match", etag);
    expect(stale.status).toBe(200);
    expect(stale.body.data.notes).toBe("changed");
    expect(stale.headers["etag"]).not.toBe(etag);
    expect((await caller.get(`/client/${crypto.randomUUID()}`).set("if-none-match", "*")).status).toBe(404);
  });

  it("PATCH and PUT with If-Match: the current ETag writes and answers the new one; any other is 412000, unchanged, no event", async () => {
    const caller = h.caller();
    const id = await createClient(caller, { notes: "v1" });
    const v1 = (await caller.get(`/client/${id}`)).headers["etag"] as string;

    const ok = await caller.patch(`/client/${id}`, { notes: "v2" }).set("if-match", v1);
    expect(ok.status).toBe(200);
    const v2 = ok.headers["etag"] as string;
    expect(v2).toMatch(STRONG);
    expect(v2).not.toBe(v1);
    expect((await caller.get(`/client/${id}`)).headers["etag"]).toBe(v2);

    const before = await events(caller);
    for (const method of ["patch", "put"] as const) {
      for (const header of [v1, `W/${v2}`, "garbage", `"nope"`]) {
        const refused = await caller[method](`/client/${id}`, { notes: "lost update" }).set("if-match", header);
        expect(refused.status).toBe(412);
        expect(refused.body).toEqual({ success: false, error: { code: 412000, message: "Precondition failed" } });
      }
    }
    const after = await caller.get(`/client/${id}`);
    expect(after.body.data.notes).toBe("v2");
    expect(after.headers["etag"]).toBe(v2);
    expect(await events(caller)).toBe(before);

    const put = await caller.put(`/client/${id}`, { notes: "v3" }).set("if-match", `"x", ${v2}`);
    expect(put.status).toBe(200);
    const star = await caller.patch(`/client/${id}`, { notes: "v4" }).set("if-match", "*");
    expect(star.status).toBe(200);
    expect(star.headers["etag"]).not.toBe(put.headers["etag"]);
    expect(await events(caller)).toBe(before + 2);
  });

  it("DELETE with If-Match: a stale ETag is 412000 and deletes nothing; the current one deletes and answers it", async () => {
    const caller = h.caller();
    const id = await createClient(caller);
    await caller.post("/contact", { clientId: id, type: "PHONE", value: "123" });
    const current = (await caller.get(`/client/${id}`)).headers["etag"] as string;
    await caller.patch(`/client/${id}`, { notes: "moved on" });
    const before = await events(caller);
    const stale = await caller.delete(`/client/${id}`).set("if-match", current);
    expect([stale.status, stale.body.error.code]).toEqual([412, 412000]);
    expect((await caller.get(`/client/${id}`)).body.data.contacts).toHaveLength(1); // nothing cascaded either
    expect(await events(caller)).toBe(before);

    const now = (await caller.get(`/client/${id}`)).headers["etag"] as string;
    const deleted = await caller.delete(`/client/${id}`).set("if-match", now);
    expect(deleted.status).toBe(200);
    expect(deleted.headers["etag"]).toBe(now);
    expect((await caller.get(`/client/${id}`)).status).toBe(404);
    expect(await events(caller)).toBe(before + 2); // contact.deleted, client.deleted
  });

  it("an invoice's ETag covers its items; unknown ids and other businesses' records stay 404001 under If-Match", async () => {
    const caller = h.caller();
    const clientId = await createClient(caller);
    const created = await caller.post("/invoice", { clientId, items: [{ description: "Work", quantity: 1, unitPrice: 10 }] });
    const id = created.body.data.id as string;
    const v1 = (await caller.get(`/invoice/${id}`)).headers["etag"] as string;
    expect(created.headers["etag"]).toBe(v1);
    const changed = await caller.patch(`/invoice/${id}`, { items: [{ description: "Work", quantity: 2, unitPrice: 10 }] }).set("if-match", v1);
    expect(changed.status).toBe(200);
    expect(changed.headers["etag"]).not.toBe(v1);
    expect((await caller.get(`/invoice/${id}`)).headers["etag"]).toBe(changed.headers["etag"]);

    const stranger = h.caller();
    expect((await stranger.patch(`/invoice/${id}`, { notes: "x" }).set("if-match", "*")).body.error.code).toBe(404001);
    expect((await stranger.delete(`/invoice/${id}`).set("if-match", "*")).body.error.code).toBe(404001);
    expect((await caller.patch(`/invoice/${crypto.randomUUID()}`, { notes: "x" }).set("if-match", "*")).body.error.code).toBe(404001);
  });

  it("two writers with the same If-Match: exactly one wins, the other gets 412000", async () => {
    const caller = h.caller();
    const id = await createClient(caller);
    const etag = (await caller.get(`/client/${id}`)).headers["etag"] as string;
    const before = await events(caller);
    const results = await Promise.all(["a", "b", "c", "d"].map((notes) => caller.patch(`/client/${id}`, { notes }).set("if-match", etag)));
    expect(results.map((r) => r.status).sort()).toEqual([200, 412, 412, 412]);
    const winner = results.find((r) => r.status === 200)!;
    expect((await caller.get(`/client/${id}`)).body.data.notes).toBe(winner.body.data.notes);
    expect(await events(caller)).toBe(before + 1);
  });
}

describe("conditional requests on PGlite", () => conditionalSuite("pglite"));
describePostgres("conditional requests on PostgreSQL", () => conditionalSuite("postgres"));
