// Lists: pagination arithmetic on a known data set, stable pages under createdAt ties, and the
// query language wired to each entity (where, orderBy, include, their errors).
import { uuidv7 } from "@crm/contracts";
import { describePostgres } from "@crm/testing";
import { countSeeded, createClient, sharedHarness, type Caller, type Mode } from "./harness";

function listSuite(mode: Mode, config: NodeJS.ProcessEnv = {}) {
  const h = sharedHarness(mode, { config });
  let caller: Caller;

  beforeAll(async () => {
    caller = h.caller();
    // 23 clients, strictly increasing createdAt (one per second), every third inactive.
    const base = Date.UTC(2025, 0, 1);
    await h.prisma.client.createMany({
      data: Array.from({ length: 23 }, (_, i) => ({
        id: uuidv7(base + i * 1000),
        businessId: caller.businessId,
        firstName: `Client${String(i + 1).padStart(2, "0")}`,
        lastName: i % 2 === 0 ? "Even" : "Odd",
        email: i < 5 ? `c${i + 1}@Example.com` : null,
        isActive: i % 3 !== 0,
        createdAt: new Date(base + i * 1000),
      })),
    });
    await countSeeded(h, caller.businessId, "client", 23);
  });

  it("paginates 23 records in pages of 10: lastPage 3, prev/next right, page 4 empty", async () => {
    const pages = [];
    for (const page of [1, 2, 3, 4]) pages.push((await caller.get(`/client?perPage=10&page=${page}`).expect(200)).body);
    expect(pages.map((p) => p.data.length)).toEqual([10, 10, 3, 0]);
    expect(pages.map((p) => p.meta)).toEqual([
      { total: 23, lastPage: 3, currentPage: 1, perPage: 10, prev: null, next: 2, nextCursor: expect.any(String) },
      { total: 23, lastPage: 3, currentPage: 2, perPage: 10, prev: 1, next: 3, nextCursor: expect.any(String) },
      { total: 23, lastPage: 3, currentPage: 3, perPage: 10, prev: 2, next: null, nextCursor: null },
      { total: 23, lastPage: 3, currentPage: 4, perPage: 10, prev: 3, next: null, nextCursor: null },
    ]);
    // Default order: newest first.
    const names = pages.flatMap((p) => p.data.map((c: { firstName: string }) => c.firstName));
    expect(names[0]).toBe("Client23");
    expect(names[22]).toBe("Client01");
    expect(new Set(names).size).toBe(23);
  });

  it("uses the defaults (page 1, perPage 10), caps perPage at 100 and refuses bad numbers (400001)", async () => {
    const res = await caller.get("/client").expect(200);
    expect(res.body.meta).toEqual({ total: 23, lastPage: 3, currentPage: 1, perPage: 10, prev: null, next: 2, nextCursor: expect.any(String) });
    const capped = await caller.get("/client?perPage=500").expect(200);
    expect(capped.body.meta).toMatchObject({ perPage: 100, lastPage: 1 });
    expect(capped.body.data).toHaveLength(23);
    for (const q of ["page=0", "page=-1", "page=1.5", "page=abc", "perPage=0", "perPage=x"]) {
      const bad = await caller.get(`/client?${q}`).expect(400);
      expect(bad.body.error).toMatchObject({ code: 400001, message: "Validation failed" });
    }
  });

  it("an empty business has total 0 and lastPage 0", async () => {
    const empty = h.caller();
    const res = await empty.get("/invoice").expect(200);
    expect(res.body).toEqual({ success: true, data: [], meta: { total: 0, lastPage: 0, currentPage: 1, perPage: 10, prev: null, next: null, nextCursor: null } });
  });

  it("keeps pages stable and non-overlapping when createdAt ties", async () => {
    const tied = h.caller();
    const at = new Date(Date.UTC(2025, 5, 1));
    await h.prisma.employee.createMany({
      data: Array.from({ length: 17 }, (_, i) => ({ id: uuidv7(), businessId: tied.businessId, firstName: `E${i}`, lastName: "Tie", createdAt: at })),
    });
    await countSeeded(h, tied.businessId, "employee", 17);
    for (const orderBy of ["", "&orderBy=createdAt:asc", "&orderBy=lastName:desc"]) {
      const seen: string[] = [];
      for (let page = 1; page <= 5; page++) {
        const res = await tied.get(`/employee?perPage=4&page=${page}${orderBy}`).expect(200);
        seen.push(...res.body.data.map((e: { id: string }) => e.id));
      }
      expect(seen).toHaveLength(17);
      expect(new Set(seen).size).toBe(17);
      // The id tie-breaker takes the direction of the last pair.
      const sorted = [...seen].sort();
      expect(seen).toEqual(orderBy.endsWith("asc") ? sorted : sorted.reverse());
    }
  });

  it("filters with where, always inside the caller's business", async () => {
    const get = async (where: string) => (await caller.get(`/client?perPage=100&where=${encodeURIComponent(where)}`).expect(200)).body;
    expect((await get("isActive:false")).meta.total).toBe(8);
    expect((await get("isActive:bool(true)")).meta.total).toBe(15);
    expect((await get("firstName:Client07")).data.map((c: { firstName: string }) => c.firstName)).toEqual(["Client07"]);
    expect((await get("firstName:client07")).meta.total).toBe(0); // equality is case-sensitive
    expect((await get("email:contains:example")).meta.total).toBe(5); // contains is not
    expect((await get("firstName:startsWith:client2")).meta.total).toBe(4);
    expect((await get("OR:[firstName:Client01,firstName:Client02],lastName:Even")).meta.total).toBe(1);
    expect((await get("NOT:email:c1@Example.com")).meta.total).toBe(22); // NULL emails included
    expect((await get("createdAt:gte:date(2025-01-01T00:00:20Z)")).meta.total).toBe(3);
    expect((await get(`businessId:${uuidv7()}`)).meta.total).toBe(0);
    expect((await get("id:not-a-uuid")).meta.total).toBe(0);
    expect((await get("NOT:id:not-a-uuid")).meta.total).toBe(23);
    for (const bad of ["nope:1", "isActive:maybe", "firstName:gt", "OR:[]", "email:contains:", "isActive:contains:t", "id:contains:abc", "a".repeat(2001)]) {
      const res = await caller.get(`/client?where=${encodeURIComponent(bad)}`);
      if (bad === "email:contains:" || bad === "firstName:gt") {
        // Empty values are still values; what matters is that nothing but 200 or 400019 comes out.
        expect([200, 400]).toContain(res.status);
        if (res.status === 400) expect(res.body.error.code).toBe(400019);
        continue;
      }
      expect([bad, res.status, res.body]).toEqual([
        bad,
        400,
        { success: false, error: { code: 400019, message: "Invalid query format", details: [{ path: "where", message: expect.any(String) }] } },
      ]);
    }
  });

  it("sorts with orderBy and answers 400011 for an invalid one", async () => {
    const res = await caller.get("/client?orderBy=lastName:asc,firstName:desc&perPage=3").expect(200);
    expect(res.body.data.map((c: { firstName: string; lastName: string }) => `${c.lastName}/${c.firstName}`)).toEqual(["Even/Client23", "Even/Client21", "Even/Client19"]);
    for (const bad of ["firstName", "firstName:up", "nope:asc", "firstName:asc,", "firstName:ASC", "contacts:asc"]) {
      const err = await caller.get(`/client?orderBy=${encodeURIComponent(bad)}`).expect(400);
      expect(err.body).toEqual({ success: false, error: { code: 400011, message: "Invalid sorting order", details: [{ path: "orderBy", message: expect.any(String) }] } });
    }
  });

  it("includes relations: client's default contacts, -contacts, invoices keeps contacts, 400019 for unknown ones", async () => {
    const clientId = await createClient(caller, { firstName: "WithRelations" });
    const contact = (await caller.post("/contact", { clientId, type: "EMAIL", value: "r@example.com" }).expect(201)).body.data;
    const invoice = (await caller.post("/invoice", { clientId, items: [{ description: "A", quantity: 1, unitPrice: 5 }] }).expect(201)).body.data;

    const plain = (await caller.get(`/client/${clientId}`).expect(200)).body.data;
    expect(plain.contacts).toEqual([contact]);
    expect(plain.invoices).toBeUndefined();
    const without = (await caller.get(`/client/${clientId}?include=-contacts`).expect(200)).body.data;
    expect(without.contacts).toBeUndefined();
    const both = (await caller.get(`/client/${clientId}?include=invoices`).expect(200)).body.data;
    expect(both.contacts).toEqual([contact]);
    expect(both.invoices).toEqual([invoice]);
    // `include` is a set: a relation named twice is included once, and naming one wins over `-name`.
    for (const include of ["invoices,invoices", "contacts,invoices,contacts,invoices", "invoices,-contacts,contacts"]) {
      expect((await caller.get(`/client/${clientId}?include=${include}`).expect(200)).body.data).toEqual(both);
      expect((await caller.get(`/client?where=firstName:WithRelations&include=${include}`).expect(200)).body.data).toEqual([both]);
    }
    const quotesOnly = (await caller.get(`/client/${clientId}?include=quotes,-contacts,-invoices`).expect(200)).body.data;
    expect([quotesOnly.quotes, quotesOnly.contacts, quotesOnly.invoices]).toEqual([[], undefined, undefined]);

    const listed = (await caller.get(`/client?where=firstName:WithRelations&include=invoices`).expect(200)).body.data;
    expect(listed[0]).toMatchObject({ contacts: [contact], invoices: [invoice] });
    const contactWithClient = (await caller.get(`/contact/${contact.id}?include=client`).expect(200)).body.data;
    expect(contactWithClient.client).toMatchObject({ id: clientId, firstName: "WithRelations" });
    expect(contactWithClient.client.contacts).toBeUndefined();
    const invoices = (await caller.get(`/invoice?include=client`).expect(200)).body.data;
    expect(invoices[0].client.id).toBe(clientId);

    for (const url of [`/client/${clientId}?include=orders`, "/client?include=contact", "/invoice?include=items", "/product?include=client", "/client?include="]) {
      const res = await caller.get(url).expect(400);
      expect(res.body).toEqual({ success: false, error: { code: 400019, message: "Invalid query format", details: [{ path: "include", message: expect.any(String) }] } });
    }
  });

  it("says where a query went wrong: the parameter, and the field, cast or position", async () => {
    const detail = async (query: string) => (await caller.get(`/client?${query}`).expect(400)).body.error.details;
    expect(await detail(`where=${encodeURIComponent("foo:bar")}`)).toEqual([{ path: "where", message: 'unknown field "foo" at character 1' }]);
    expect(await detail(`where=${encodeURIComponent("OR:[isActive:true")}`)).toEqual([{ path: "where", message: "malformed where at character 18: OR:[ is not closed by ]" }]);
    expect(await detail("where=isActive:maybe")).toEqual([{ path: "where", message: '"maybe" is not a valid boolean for field "isActive"' }]);
    expect(await detail(`where=${encodeURIComponent("createdAt:gte:date(garbage)")}`)).toEqual([
      { path: "where", message: '"date(garbage)" is not an ISO 8601 date or date-time (field "createdAt")' },
    ]);
    expect(await detail("include=bogus")).toEqual([{ path: "include", message: 'unknown relation "bogus" (relations: contacts, invoices, quotes)' }]);
    expect(await detail("orderBy=lastName:asc,nickname:desc")).toEqual([{ path: "orderBy", message: 'unknown sort field "nickname" (pair 2)' }]);
    expect(await detail("where=a&where=b")).toEqual([{ path: "where", message: "where must be given once, as one string" }]);
  });

  it("refuses query parameters a list or a read does not take, naming each (400001), and accepts every one it does", async () => {
    const list = await caller.get("/client?limit=5&perPage=2&sort=x").expect(400);
    expect(list.body).toEqual({
      success: false,
      error: {
        code: 400001,
        message: "Validation failed",
        details: [
          { path: "limit", message: 'Unknown query parameter "limit"; this endpoint takes page, perPage, where, orderBy, include, fields, cursor, deleted' },
          { path: "sort", message: 'Unknown query parameter "sort"; this endpoint takes page, perPage, where, orderBy, include, fields, cursor, deleted' },
        ],
      },
    });
    const clientId = await createClient(caller, { firstName: "Params" });
    const one = await caller.get(`/client/${clientId}?include=invoices&perPage=1`).expect(400);
    expect(one.body.error).toEqual({
      code: 400001,
      message: "Validation failed",
      details: [{ path: "perPage", message: 'Unknown query parameter "perPage"; this endpoint takes include, fields, deleted' }],
    });
    // Parameter names are case-sensitive, as the interface writes them.
    expect((await caller.get("/invoice?perpage=5").expect(400)).body.error.details[0].path).toBe("perpage");
    await caller.get(`/client/${clientId}?include=invoices`).expect(200);
    await caller.get("/client?page=1&perPage=2&where=isActive:true&orderBy=createdAt:desc&include=invoices").expect(200);
  });
}

describe("lists on PGlite", () => listSuite("pglite"));
describePostgres("lists on PostgreSQL", () => listSuite("postgres"));
describePostgres("lists on PostgreSQL, through Prisma (D13 off)", () => listSuite("postgres", { RECORDS_LIST_SQL: "false" }));
