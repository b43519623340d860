// Custom fields in a list's `where` and `orderBy` (extensions §E4): `customFields.<key>` takes the
// operators, casts and errors of a built-in field of its type; an unknown, archived or another
// business's key is 400019 in where and 400011 in orderBy; cursors walk a custom sort. Each case runs
// on PGlite and PostgreSQL, with the list SQL (D13) on and off (Prisma's list path).
import { allPermissions, uuidv7 } from "@crm/contracts";
import { describeEachMode } from "@crm/testing";
import { type Caller, type Mode, sharedHarness } from "./harness";

type Values = Record<string, unknown>;

/** The records of the suite, by index: what `customFields` each is created with. */
const RECORDS: Values[] = [
  { code: "Alpha", score: 10.5, rank: 3, vip: true, born: "2024-01-15", seen: "2024-01-15T10:00:00Z", tier: "gold", tags: ["a", "b"] },
  { code: "beta", score: 2, rank: 10, vip: false, born: "2023-12-31", seen: "2024-01-15T09:59:59Z", tier: "silver", tags: ["b"] },
  { code: "Gamma_1", score: -1.25, rank: -5, vip: true, born: "2024-01-14", seen: "2023-06-01T00:00:00+02:00", tags: ["c"] },
  { score: 100, rank: 20, tier: "gold" },
  { code: "delta", score: 10.5, rank: 3 },
  {},
];

const WHERES: Array<[string, number[]]> = [
  ["customFields.code:Alpha", [0]],
  ["customFields.code:contains:A", [0, 1, 2, 4]],
  ["customFields.code:contains:LTA", [4]],
  ["customFields.code:startsWith:gamma_", [2]],
  ["customFields.code:endsWith:%", []],
  ["NOT:customFields.code:Alpha", [1, 2, 3, 4, 5]],
  ["customFields.code:gte:b", [1, 4]],
  ["customFields.score:gt:10", [0, 3, 4]],
  ["customFields.score:10.50", [0, 4]],
  ["customFields.score:lte:int(2)", [1, 2]],
  ["NOT:customFields.score:gt:float(0)", [2, 5]],
  ["customFields.rank:gte:3", [0, 1, 3, 4]],
  ["customFields.rank:lt:int(0)", [2]],
  ["customFields.rank:20", [3]],
  // An integer field holds any safe integer, not only 32-bit ones.
  ["customFields.rank:lt:9007199254740991", [0, 1, 2, 3, 4]],
  ["customFields.vip:true", [0, 2]],
  ["customFields.vip:bool(false)", [1]],
  ["NOT:customFields.vip:true", [1, 3, 4, 5]],
  ["customFields.born:gte:date(2024-01-14)", [0, 2]],
  ["customFields.born:2024-01-15", [0]],
  ["customFields.born:lt:2024-01-14T12:00:00Z", [1, 2]],
  ["customFields.born:gt:2024-01-14T12:00:00Z", [0]],
  ["customFields.born:date(2024-01-15T10:00:00Z)", []],
  ["customFields.seen:gt:2024-01-15T09:59:59Z", [0]],
  ["customFields.seen:date(2024-01-15T11:00:00+01:00)", [0]],
  ["customFields.seen:lt:2024-01-01", [2]],
  ["customFields.tier:gold", [0, 3]],
  ["NOT:customFields.tier:gold", [1, 2, 4, 5]],
  ["customFields.tags:b", [0, 1]],
  ["NOT:customFields.tags:b", [2, 3, 4, 5]],
  ["OR:[customFields.tier:silver,customFields.tags:c]", [1, 2]],
  ["customFields.vip:true,firstName:R0", [0]],
  ["OR:[customFields.score:gt:5,NOT:customFields.code:startsWith:a]", [0, 1, 2, 3, 4, 5]],
  ["NOT:OR:[customFields.score:gt:5,customFields.tags:c]", [1, 5]],
];

const REFUSED: Array<[string, string, number]> = [
  ["where", "customFields.nope:x", 400019],
  ["where", "customFields.old:x", 400019],
  ["where", "customFields.secret:x", 400019],
  ["where", "customFields:x", 400019],
  ["where", "customFields.vip:gt:true", 400019],
  ["where", "customFields.score:abc", 400019],
  ["where", "customFields.score:contains:1", 400019],
  ["where", "customFields.rank:float(1.5)", 400019],
  ["where", "customFields.rank:9007199254740992", 400019],
  ["where", "customFields.tier:bronze", 400019],
  ["where", "customFields.tier:gt:gold", 400019],
  ["where", "customFields.tags:contains:a", 400019],
  ["where", "customFields.born:bool(true)", 400019],
  ["where", "customFields.score:gt:1e5", 400019],
  ["where", "customFields.seen:gt:date(2024-13-01)", 400019],
  ["orderBy", "customFields.nope:asc", 400011],
  ["orderBy", "customFields.old:asc", 400011],
  ["orderBy", "customFields.secret:desc", 400011],
  ["orderBy", "customFields.tags:asc", 400011],
  ["orderBy", "customFields.score:up", 400011],
];

/** `config`: the list SQL on (the default) or off. */
function querySuite(mode: Mode, config: NodeJS.ProcessEnv): void {
  jest.setTimeout(60_000);
  const h = sharedHarness(mode, { config });
  let a: Caller;
  const ids: string[] = [];

  async function define(caller: Caller, body: object): Promise<void> {
    const res = await caller.post("/client/fields", body);
    if (res.status !== 201) throw new Error(`define failed: ${res.status} ${JSON.stringify(res.body)}`);
  }

  beforeAll(async () => {
    a = h.caller({ permissions: allPermissions });
    await define(a, { key: "code", label: "Code", type: "text" });
    await define(a, { key: "score", label: "Score", type: "number" });
    await define(a, { key: "rank", label: "Rank", type: "integer" });
    await define(a, { key: "vip", label: "VIP", type: "boolean" });
    await define(a, { key: "born", label: "Born", type: "date" });
    await define(a, { key: "seen", label: "Seen", type: "dateTime" });
    await define(a, { key: "tier", label: "Tier", type: "select", options: ["gold", "silver"] });
    await define(a, { key: "tags", label: "Tags", type: "multiSelect", options: ["a", "b", "c"] });
    await define(a, { key: "old", label: "Old", type: "text" });
    for (const [i, customFields] of RECORDS.entries()) {
      const res = await a.post("/client", { firstName: `R${i}`, lastName: "Q", customFields: { ...customFields, old: "x" } }).expect(201);
      ids.push(res.body.data.id as string);
    }
    await a.delete("/client/fields/old").expect(200);
    // Another business: its own key, and a record that matches our filters, which no list of ours may show.
    const other = h.caller({ permissions: allPermissions });
    await define(other, { key: "secret", label: "Secret", type: "text" });
    await define(other, { key: "code", label: "Code", type: "text" });
    await other.post("/client", { firstName: "R0", lastName: "Q", customFields: { code: "Alpha", secret: "s" } }).expect(201);
  });

  const list = async (params: Record<string, string>) => {
    const res = await a.get(`/client?${new URLSearchParams({ perPage: "100", include: "-contacts", ...params })}`);
    expect([params, res.status, res.body.error]).toEqual([params, 200, undefined]);
    return res.body as { data: Array<{ id: string; customFields: Values }>; meta: { total: number; nextCursor: string | null } };
  };

  it.each(WHERES)("where=%s selects records %j, with their total", async (where, expected) => {
    const body = await list({ where });
    expect(body.data.map((record) => ids.indexOf(record.id)).sort()).toEqual(expected);
    expect(body.meta.total).toBe(expected.length);
  });

  /** The records in `direction` order of `key`'s value (records without one last ascending, first descending), ties by id. */
  function sortedBy(key: string, direction: "asc" | "desc", compare: (x: never, y: never) => number): string[] {
    const order = ids.map((id, i) => ({ id, value: RECORDS[i]![key] as never }));
    order.sort((x, y) => {
      const nulls = (x.value === undefined ? 1 : 0) - (y.value === undefined ? 1 : 0);
      const byValue = nulls !== 0 ? nulls : x.value === undefined ? 0 : compare(x.value, y.value);
      const asc = byValue !== 0 ? byValue : x.id < y.id ? -1 : 1;
      return direction === "asc" ? asc : -asc;
    });
    return order.map((entry) => entry.id);
  }
  const numbers = (x: number, y: number) => x - y;
  const instants = (x: string, y: string) => Date.parse(x) - Date.parse(y);
  const booleans = (x: boolean, y: boolean) => Number(x) - Number(y);

  it.each([
    ["score", "asc", numbers],
    ["score", "desc", numbers],
    ["rank", "asc", numbers],
    ["born", "desc", instants],
    ["seen", "asc", instants],
    ["vip", "asc", booleans],
  ] as const)("orderBy=customFields.%s:%s sorts by the typed value, id breaking ties", async (key, direction, compare) => {
    const body = await list({ orderBy: `customFields.${key}:${direction}` });
    expect(body.data.map((record) => record.id)).toEqual(sortedBy(key, direction, compare as never));
  });

  it("sorts text fields as text, and a custom sort combines with a built-in one", async () => {
    const body = await list({ where: "NOT:customFields.code:startsWith:G", orderBy: "customFields.code:asc" });
    // Records 3 and 5 have no code: last, by id (created in that order).
    expect(body.data.map((record) => ids.indexOf(record.id))).toEqual([0, 1, 4, 3, 5]);
    const mixed = await list({ orderBy: "customFields.tier:desc,firstName:asc" });
    expect(mixed.data.map((record) => ids.indexOf(record.id))).toEqual([2, 4, 5, 1, 0, 3]);
  });

  it.each(REFUSED)("%s=%s is %d, like an unknown built-in field", async (parameter, value, code) => {
    const res = await a.get(`/client?${new URLSearchParams({ [parameter]: value })}`);
    expect([res.status, res.body.error?.code]).toEqual([400, code]);
    expect(res.body.error.details[0].path).toBe(parameter);
  });

  it("walks a custom sort by cursor: the same records in the same order as one page", async () => {
    for (const orderBy of ["customFields.score:desc", "customFields.born:asc,firstName:desc", "customFields.code:asc", "customFields.vip:desc,customFields.rank:asc"]) {
      const whole = (await list({ orderBy })).data.map((record) => record.id);
      const walked: string[] = [];
      let body = await list({ orderBy, perPage: "2" });
      walked.push(...body.data.map((record) => record.id));
      while (body.meta.nextCursor) {
        body = await list({ cursor: body.meta.nextCursor, perPage: "2" });
        walked.push(...body.data.map((record) => record.id));
      }
      expect([orderBy, walked]).toEqual([orderBy, whole]);
    }
  });

  it("a cursor whose custom field was archived since is refused; a filtered walk keeps its filter", async () => {
    const b = h.caller({ permissions: allPermissions });
    await define(b, { key: "level", label: "Level", type: "integer" });
    for (const level of [1, 2, 3, 4, 5]) await b.post("/client", { firstName: "L", lastName: "Q", customFields: { level } }).expect(201);
    const first = await b.get("/client?orderBy=customFields.level:asc&where=customFields.level:gt:1&perPage=2").expect(200);
    expect(first.body.data.map((record: { customFields: Values }) => record.customFields["level"])).toEqual([2, 3]);
    const second = await b.get(`/client?cursor=${first.body.meta.nextCursor}&perPage=2`).expect(200);
    expect(second.body.data.map((record: { customFields: Values }) => record.customFields["level"])).toEqual([4, 5]);
    expect(second.body.meta.nextCursor).toBeNull();
    const again = await b.get("/client?orderBy=customFields.level:desc&perPage=2").expect(200);
    await b.delete("/client/fields/level").expect(200);
    const refused = await b.get(`/client?cursor=${again.body.meta.nextCursor}&perPage=2`);
    expect([refused.status, refused.body.error?.code]).toEqual([400, 400011]);
  });

  it("a cursor whose custom field was removed for good and defined again with another type is 400019, never a database error", async () => {
    const b = h.caller({ permissions: allPermissions });
    await define(b, { key: "ref", label: "Ref", type: "text" });
    for (const ref of ["a", "b", "c"]) await b.post("/client", { firstName: "R", lastName: "Q", customFields: { ref } }).expect(201);
    const first = await b.get("/client?orderBy=customFields.ref:asc&perPage=1").expect(200);
    await b.delete("/client/fields/ref").expect(200);
    await b.delete("/client/fields/ref?permanent=true").expect(200);
    await define(b, { key: "ref", label: "Ref", type: "number" });
    const refused = await b.get(`/client?cursor=${first.body.meta.nextCursor}&perPage=1`);
    expect([refused.status, refused.body.error?.code]).toEqual([400, 400019]);
  });

  it("a custom sort follows every write: creates one by one and in a batch, a definition added later, updates, trash, restore, purge, archive", async () => {
    const c = h.caller({ permissions: allPermissions });
    await define(c, { key: "n", label: "N", type: "number" });
    const made: string[] = [];
    for (const n of [3, 1, undefined]) made.push((await c.post("/client", { firstName: "S", lastName: "Q", customFields: n === undefined ? {} : { n } }).expect(201)).body.data.id);
    const batch = await c
      .post("/client/batch", {
        items: [
          { firstName: "S", lastName: "Q", customFields: { n: 2 } },
          { firstName: "S", lastName: "Q", customFields: { n: 1 } },
        ],
      })
      .expect(201);
    made.push(...batch.body.data.map((record: { id: string }) => record.id));
    const [a3, b1, cNone, d2, e1] = made as [string, string, string, string, string];
    const byId = (...list: string[]) => list.sort();
    const order = async (query: string) =>
      (await c.get(`/client?${query.includes("perPage") ? "" : "perPage=100&"}${query}`).expect(200)).body.data.map((record: { id: string }) => record.id);
    const [lowOnes, ...rest] = [byId(b1, e1), d2, a3, cNone];
    expect(await order("orderBy=customFields.n:asc")).toEqual([...lowOnes!, ...rest]);
    expect(await order("orderBy=customFields.n:desc")).toEqual([cNone, a3, d2, ...lowOnes!.reverse()]);
    // A definition made after the records: none of them has a value, so all sort by id.
    await define(c, { key: "t", label: "T", type: "text" });
    expect(await order("orderBy=customFields.t:asc")).toEqual(byId(...made));
    await c.patch(`/client/${b1}`, { customFields: { n: 5, t: "x" } }).expect(200);
    await c.patch(`/client/${cNone}`, { customFields: { n: 0 } }).expect(200);
    expect(await order("orderBy=customFields.n:asc")).toEqual([cNone, e1, d2, a3, b1]);
    expect(await order("orderBy=customFields.t:desc")).toEqual([...byId(a3, cNone, d2, e1).reverse(), b1]);
    // Offset pages are slices of the same order.
    expect(await order("orderBy=customFields.n:asc&perPage=2&page=2")).toEqual([d2, a3]);
    await c.delete(`/client/${d2}`).expect(200);
    expect(await order("orderBy=customFields.n:asc")).toEqual([cNone, e1, a3, b1]);
    expect(await order("orderBy=customFields.n:asc&deleted=include")).toEqual([cNone, e1, d2, a3, b1]);
    expect(await order("orderBy=customFields.n:desc&deleted=only")).toEqual([d2]);
    await c.post(`/client/${d2}/restore`).expect(200);
    expect(await order("orderBy=customFields.n:asc&where=customFields.n:gt:0")).toEqual([e1, d2, a3, b1]);
    await c.delete(`/client/${a3}`).expect(200);
    const rowsOf = (where: { recordId?: string; key?: string }) => h.prisma.customFieldSortValue.count({ where: { businessId: c.businessId, ...where } });
    expect(await rowsOf({ recordId: a3 })).toBe(2);
    await c.delete(`/client/${a3}?permanent=true`).expect(200);
    expect(await rowsOf({ recordId: a3 })).toBe(0);
    expect(await order("orderBy=customFields.n:asc&deleted=include")).toEqual([cNone, e1, d2, b1]);
    // Archived and back: its values, and so its order, were kept.
    await c.delete("/client/fields/n").expect(200);
    await c.patch("/client/fields/n", { isArchived: false }).expect(200);
    expect(await order("orderBy=customFields.n:desc")).toEqual([b1, d2, e1, cNone]);
    // Removed for good: its rows go with it.
    await c.delete("/client/fields/t").expect(200);
    await c.delete("/client/fields/t?permanent=true").expect(200);
    expect([await rowsOf({ key: "t" }), await rowsOf({ key: "n" })]).toEqual([0, 4]);
  });

  (mode === "postgres" ? it : it.skip)("a record whose create raced a new definition (committed after it, begun before) sorts on it too", async () => {
    const c = h.caller({ permissions: allPermissions });
    await c.post("/client", { firstName: "Before", lastName: "Race" }).expect(201);
    const raced = uuidv7();
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    // A create still open when the definition commits: its snapshot had no such definition, so it wrote no row for it.
    const create = h.prisma.$transaction(
      async (tx) => {
        await tx.$executeRawUnsafe(
          `INSERT INTO "records"."Client" ("id", "businessId", "firstName", "lastName", "updatedAt") VALUES ($1::uuid, $2::uuid, 'Raced', 'Race', now())`,
          raced,
          c.businessId,
        );
        await held;
      },
      { timeout: 30_000 },
    );
    const defined = c.post("/client/fields", { key: "late", label: "Late", type: "text" }).then((res) => res.status);
    // The definition has committed (its own rows could not see the open create) before the create commits.
    for (let i = 0; i < 500 && !(await h.prisma.customFieldDefinition.findFirst({ where: { businessId: c.businessId, key: "late" } })); i++) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    release();
    await create;
    expect(await defined).toBe(201);
    expect(await h.prisma.customFieldSortValue.count({ where: { businessId: c.businessId, key: "late", recordId: raced } })).toBe(1);
    const order = (await c.get("/client?orderBy=customFields.late:asc").expect(200)).body.data.map((r: { firstName: string }) => r.firstName);
    expect(order.sort()).toEqual(["Before", "Raced"]);
  });

  it("a custom sort on invoices, created with their line items in a transaction of their own", async () => {
    const c = h.caller({ permissions: allPermissions });
    await c.post("/invoice/fields", { key: "due", label: "Due", type: "date" }).expect(201);
    const clientId = (await c.post("/client", { firstName: "I", lastName: "Q" }).expect(201)).body.data.id;
    const invoices: string[] = [];
    for (const due of ["2024-03-01", "2024-01-01", "2024-02-01"]) {
      invoices.push((await c.post("/invoice", { clientId, customFields: { due }, items: [{ description: "x", quantity: 1, unitPrice: 1 }] }).expect(201)).body.data.id);
    }
    const listed = await c.get("/invoice?orderBy=customFields.due:asc").expect(200);
    expect(listed.body.data.map((invoice: { id: string }) => invoice.id)).toEqual([invoices[1], invoices[2], invoices[0]]);
  });
}

describeEachMode("custom fields in where and orderBy on %s", (mode) => querySuite(mode, {}));
describeEachMode("custom fields in where and orderBy on %s, Prisma's list path", (mode) => querySuite(mode, { RECORDS_LIST_SQL: "false" }));
