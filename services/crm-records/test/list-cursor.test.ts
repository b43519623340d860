// Cursor pagination (extensions §E2.1): a walk with meta.nextCursor visits the same records in the
// same order as the offset pages of its query, ends, keeps its where/orderBy inside the cursor,
// visits every record that exists throughout it exactly once while others are created, updated and
// deleted, and refuses any cursor it did not make for this business and entity.
import { uuidv7 } from "@crm/contracts";
import { describePostgres } from "@crm/testing";
import { CursorCodec } from "../src/domain/list-cursor";
import { countSeeded, createClient, sharedHarness, type Caller, type Mode } from "./harness";

interface Page {
  data: Array<{ id: string; [field: string]: unknown }>;
  meta: { nextCursor: string | null; perPage: number; total?: number };
}

/** Walks from the first (offset) page to the end; bounded so a walk that never ends fails instead of hanging. */
async function walk(caller: Caller, entity: string, query: string, perPage: number, between?: (pageNo: number) => Promise<void>): Promise<Page[]> {
  const pages: Page[] = [(await caller.get(`/${entity}?perPage=${perPage}${query ? `&${query}` : ""}`).expect(200)).body];
  for (let i = 0; pages[pages.length - 1]!.meta.nextCursor !== null; i++) {
    if (i > 200) throw new Error("the walk did not end");
    await between?.(pages.length);
    const cursor = pages[pages.length - 1]!.meta.nextCursor!;
    const res = await caller.get(`/${entity}?cursor=${encodeURIComponent(cursor)}&perPage=${perPage}${entity === "client" ? "&include=-contacts" : ""}`);
    expect([res.status, res.body.error]).toEqual([200, undefined]);
    pages.push(res.body);
  }
  return pages;
}

const ids = (pages: Page[]) => pages.flatMap((page) => page.data.map((row) => row.id));

function suite(mode: Mode, config: NodeJS.ProcessEnv = {}) {
  const h = sharedHarness(mode, { config });
  let caller: Caller;

  beforeAll(async () => {
    caller = h.caller();
    const base = Date.UTC(2025, 0, 1);
    await h.prisma.client.createMany({
      data: Array.from({ length: 31 }, (_, i) => ({
        id: uuidv7(base + i * 1000),
        businessId: caller.businessId,
        firstName: `C${String(i).padStart(2, "0")}`,
        lastName: ["Smith", "Jones", "Brown"][i % 3]!,
        email: i % 4 === 0 ? null : `c${i % 6}@example.com`,
        isActive: i % 5 !== 0,
        // Ties on createdAt, so the id tie-breaker is inside the key.
        createdAt: new Date(base + Math.floor(i / 3) * 1000),
      })),
    });
    await countSeeded(h, caller.businessId, "client", 31);
  });

  it.each([
    ["", 31],
    ["include=-contacts", 31],
    ["where=isActive:true&orderBy=lastName:asc", 24],
    ["orderBy=email:asc,firstName:desc", 31],
    ["orderBy=email:desc", 31],
    ["where=NOT:email:c1@example.com&orderBy=lastName:desc,email:asc", 26],
    ["where=email:contains:c9", 0],
  ])("?%s: the walk is the offset order, ends with a null cursor, and its later pages carry {perPage, nextCursor}", async (query, count) => {
    const expected = (await caller.get(`/client?perPage=100&${query}`).expect(200)).body.data.map((row: { id: string }) => row.id);
    expect(expected).toHaveLength(count);
    const pages = await walk(caller, "client", query, 4);
    expect(ids(pages)).toEqual(expected);
    expect(pages[pages.length - 1]!.meta.nextCursor).toBeNull();
    for (const page of pages.slice(1)) expect(Object.keys(page.meta).sort()).toEqual(["nextCursor", "perPage"]);
    // No empty page at the end: the extra row each page reads tells a full last page from one with more after it.
    expect(pages.every((page) => page.data.length > 0 || count === 0)).toBe(true);
    const exact = await walk(caller, "client", query, count || 1);
    expect(exact).toHaveLength(1);
  });

  it("an offset page's cursor continues after that page, perPage may change and include applies", async () => {
    const all = (await caller.get("/client?perPage=100&orderBy=lastName:asc").expect(200)).body.data.map((row: { id: string }) => row.id);
    const second = (await caller.get("/client?perPage=5&page=2&orderBy=lastName:asc").expect(200)).body;
    const next = (await caller.get(`/client?cursor=${encodeURIComponent(second.meta.nextCursor)}&perPage=7`).expect(200)).body;
    expect(next.data.map((row: { id: string }) => row.id)).toEqual(all.slice(10, 17));
    expect(next.data[0].contacts).toEqual([]);
    const bare = (await caller.get(`/client?cursor=${encodeURIComponent(second.meta.nextCursor)}&include=-contacts`).expect(200)).body;
    expect(bare.meta.perPage).toBe(10);
    expect(bare.data[0].contacts).toBeUndefined();
  });

  it("refuses page, where or orderBy beside a cursor (400001) and any cursor it did not make for this business and entity (400019)", async () => {
    const first = (await caller.get("/client?perPage=2&where=isActive:true").expect(200)).body;
    const cursor: string = first.meta.nextCursor;
    for (const extra of ["page=2", "where=isActive:false", "orderBy=firstName:asc", "page=1&where=isActive:true"]) {
      const res = await caller.get(`/client?cursor=${encodeURIComponent(cursor)}&${extra}`).expect(400);
      expect(res.body.error.code).toBe(400001);
      expect(res.body.error.details.map((d: { path: string }) => d.path)).toEqual(extra.split("&").map((p) => p.split("=")[0]));
    }
    expect((await caller.get(`/client?cursor=${encodeURIComponent(cursor)}&perPage=0`).expect(400)).body.error.code).toBe(400001);

    // A cursor of this business's own query, sealed with another secret (or by the old signed format, base64url(JSON).HMAC).
    const state = {
      businessId: caller.businessId,
      entity: "client" as const,
      where: "isActive:false",
      orderBy: undefined,
      deleted: "exclude" as const,
      key: ["2025-01-01T00:00:00.000Z", uuidv7()],
    };
    const otherSecret = new CursorCodec("another secret").encode(state);
    const signedJson = `${Buffer.from(JSON.stringify({ v: 1, b: caller.businessId, e: "client", w: "isActive:false", k: state.key })).toString("base64url")}.${"A".repeat(43)}`;
    const sealed = Buffer.from(cursor, "base64url");
    const flipped = (at: number) => Buffer.from(sealed.map((byte, i) => (i === at ? byte ^ 1 : byte))).toString("base64url");
    const other = h.caller();
    await createClient(other);
    await createClient(other);
    const otherCursor: string = (await other.get("/client?perPage=1").expect(200)).body.meta.nextCursor;
    const productCursor = await (async () => {
      for (let i = 0; i < 2; i++) await caller.post("/product", { name: `P${i}` }).expect(201);
      return (await caller.get("/product?perPage=1").expect(200)).body.meta.nextCursor as string;
    })();
    const refused: Array<[string, string]> = [
      ["garbage", "abc"],
      ["empty", ""],
      ["a misspelt cursor", `${cursor.slice(0, 10)}${cursor[10] === "A" ? "B" : "A"}${cursor.slice(11)}`],
      ["a truncated tag", cursor.slice(0, -2)],
      ["a character outside the alphabet added", `${cursor}!`],
      ["a bit flipped in the version", flipped(0)],
      ["a bit flipped in the nonce", flipped(5)],
      ["a bit flipped in the ciphertext", flipped(20)],
      ["a bit flipped in the tag", flipped(sealed.length - 1)],
      ["sealed with another secret", otherSecret],
      ["the old signed format", signedJson],
      ["another business's own cursor", otherCursor],
      ["another entity's cursor", productCursor],
    ];
    for (const [name, value] of refused) {
      const res = await caller.get(`/client?cursor=${encodeURIComponent(value)}`);
      expect([name, res.status, res.body]).toEqual([name, 400, { success: false, error: { code: 400019, message: "Invalid query format" } }]);
    }
    const twice = await caller.get(`/client?cursor=${encodeURIComponent(cursor)}&cursor=${encodeURIComponent(cursor)}`).expect(400);
    expect(twice.body.error.code).toBe(400019);
    // The product cursor still works where it belongs.
    expect((await caller.get(`/product?cursor=${encodeURIComponent(productCursor)}`).expect(200)).body.data).toHaveLength(1);
  });

  it("is opaque: nothing of the query or the last record's values can be read from it (issue 35 item 12)", async () => {
    const page = (await caller.get("/client?perPage=2&where=lastName:Smith&orderBy=email:asc").expect(200)).body;
    const last = page.data[1] as { email: string; id: string };
    expect(last.email).toEqual(expect.stringContaining("@example.com"));
    const cursor: string = page.meta.nextCursor;
    const readings = [cursor, Buffer.from(cursor, "base64url").toString("latin1"), Buffer.from(cursor, "base64url").toString("utf8")];
    for (const secret of [last.email, last.id, "lastName:Smith", "email:asc", "Smith"]) {
      expect([secret, readings.some((text) => text.includes(secret))]).toEqual([secret, false]);
    }
    // The same page twice: two different cursors (a fresh nonce each), both continuing the same way.
    const again: string = (await caller.get("/client?perPage=2&where=lastName:Smith&orderBy=email:asc").expect(200)).body.meta.nextCursor;
    expect(again).not.toBe(cursor);
    const next = async (c: string) => (await caller.get(`/client?cursor=${encodeURIComponent(c)}`).expect(200)).body.data.map((row: { id: string }) => row.id);
    expect(await next(again)).toEqual(await next(cursor));
  });

  it("walks a sort on notes of 10,000 CJK characters with cursors of a few KB (issue 39), in the offset pages' order", async () => {
    const walker = h.caller();
    const cjk = (seed: number, length: number) => Array.from({ length }, (_, i) => String.fromCharCode(0x4e00 + ((seed * 7_919 + i * 104_729) % 20_000))).join("");
    const long = cjk(1, 10_000);
    // Two share their first 9,000 characters; one long in ASCII; short ones; none.
    for (const notes of [long, long.slice(0, 9_000) + cjk(2, 1_000), "n".repeat(10_000), cjk(3, 10_000), "short", cjk(4, 200), null, null]) {
      await createClient(walker, { firstName: "N", lastName: "Notes", notes });
    }
    for (const direction of ["asc", "desc"]) {
      const expected = ids([(await walker.get(`/client?perPage=100&orderBy=notes:${direction}`).expect(200)).body]);
      expect(expected).toHaveLength(8);
      for (const perPage of [1, 2]) {
        const pages = await walk(walker, "client", `orderBy=notes:${direction}`, perPage);
        expect([direction, perPage, ids(pages)]).toEqual([direction, perPage, expected]);
        const cursors = pages.flatMap((page) => (page.meta.nextCursor === null ? [] : [page.meta.nextCursor]));
        expect(Math.max(...cursors.map((cursor) => cursor.length))).toBeLessThanOrEqual(2_000);
      }
    }
  });

  it("visits every record that exists throughout the walk exactly once while others are created, updated and deleted", async () => {
    const walker = h.caller();
    const seeded: Array<{ id: string; lastName: string }> = [];
    for (let i = 0; i < 24; i++) {
      const lastName = i % 2 === 0 ? "Kim" : "Lee";
      seeded.push({ id: await createClient(walker, { firstName: `W${i}`, lastName }), lastName });
    }
    const deleted = new Set<string>();
    for (const query of ["", "orderBy=lastName:asc", "where=lastName:Kim&orderBy=createdAt:asc"]) {
      // Three records of this query's set are deleted during the walk; the rest must each be seen once.
      const victims = seeded
        .filter((r, i) => i % 4 === 1 && !deleted.has(r.id))
        .slice(0, 3)
        .map((r) => r.id);
      const edited = seeded.filter((_r, i) => i % 4 === 3).map((r) => r.id);
      const created: string[] = [];
      const pages = await walk(walker, "client", query, 3, async (pageNo) => {
        created.push(await createClient(walker, { firstName: `New${pageNo}`, lastName: pageNo % 2 ? "Kim" : "Lee" }));
        const victim = victims[pageNo - 1];
        if (victim) {
          await walker.delete(`/client/${victim}`).expect(200);
          deleted.add(victim);
        }
        await walker.patch(`/client/${edited[pageNo % edited.length]}`, { notes: `edited during page ${pageNo}` }).expect(200);
      });
      const seen = ids(pages);
      expect(seen.length).toBe(new Set(seen).size);
      const stable = seeded.filter((r) => !deleted.has(r.id) && (!query.includes("where=lastName:Kim") || r.lastName === "Kim"));
      expect(stable.length).toBeGreaterThan(8);
      for (const { id } of stable) expect([query, id, seen.includes(id)]).toEqual([query, id, true]);
      for (const id of created) await walker.delete(`/client/${id}`).expect(200);
    }
  });
}

describe("list cursors on PGlite", () => suite("pglite"));
describePostgres("list cursors on PostgreSQL", () => suite("postgres"));
describePostgres("list cursors on PostgreSQL, through Prisma (D13 off)", () => suite("postgres", { RECORDS_LIST_SQL: "false" }));
