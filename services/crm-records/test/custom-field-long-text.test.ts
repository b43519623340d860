// Text values too long for a btree entry (custom-field-sort.ts): a longText of 65,536 characters that
// do not repeat, a text of 1,000 CJK characters (3 bytes each), neither compressible. Every write that
// keeps sort rows takes them (create, PATCH, batch create, a definition created over records already
// holding values), and a list sorted on them or filtered by a range on them answers exactly what the
// cast statements of list-sql.ts answer (the reference): the same records in the same order, walked
// page by page with the cursor, ascending and descending, and the same records for every range.
import { createCipheriv, hkdfSync, randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { allPermissions } from "@crm/contracts";
import type { ComparisonOperator, OrderTerm, WhereNode } from "@crm/query-language";
import { describeEachMode } from "@crm/testing";
import { entityDefinitions } from "../src/entities";
import type { CustomFieldTypes } from "../src/domain/custom-field-query";
import { customSortPageSql } from "../src/persistence/custom-sort-list";
import { LIST_CURSOR_VALUE_RETENTION_MS, listCursorValueRetentionRule } from "../src/persistence/list-cursor-values";
import { listWhereSql, orderBySql, SqlParams } from "../src/persistence/list-sql";
import { type Caller, type Mode, SECRET, sharedHarness } from "./harness";

/** A seeded generator: the same values every run. */
function randomText(seed: number, length: number, cjkOnly = false): string {
  let state = seed;
  const next = () => {
    state = (Math.imul(state, 1_103_515_245) + 12_345) >>> 0;
    return state;
  };
  // Latin letters, accented Latin (2 bytes), Greek (2 bytes), CJK (3 bytes): all in the BMP, so one JS character each.
  const pools: Array<[number, number]> = cjkOnly
    ? [[0x4e00, 0x9fff]]
    : [
        [0x61, 0x7a],
        [0xc0, 0x17f],
        [0x3b1, 0x3c9],
        [0x4e00, 0x9fff],
      ];
  let text = "";
  for (let i = 0; i < length; i++) {
    const [low, high] = pools[next() % pools.length]!;
    text += String.fromCharCode(low + (next() % (high - low + 1)));
  }
  return text;
}

const LONG = 65_536;
const L1 = randomText(1, LONG);
/** Shares L1's first 60,000 characters: only its end tells them apart. */
const L2 = L1.slice(0, 60_000) + randomText(2, LONG - 60_000);
const L3 = randomText(3, LONG);
const C1 = randomText(4, 1000, true);
const C2 = C1.slice(0, 900) + randomText(5, 100, true);
const C3 = randomText(6, 1000, true);
const KEYS = ["fNotes", "fTitle", "fLate"] as const;

/**
 * A list cursor sealed as the product wrote every one before issue 39 (list-cursor.ts, version 2): the
 * whole key inline, whatever its length. A rolling deploy hands these to the new replicas.
 */
function sealedAsBefore(businessId: string, payload: { o?: string; w?: string; k: unknown[] }): string {
  const key = Buffer.from(hkdfSync("sha256", SECRET, Buffer.alloc(0), "crm-records list cursor v2 (AES-256-GCM)", 32));
  const nonce = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", key, nonce);
  cipher.setAAD(Buffer.from(`2\u0000${businessId}\u0000client`, "utf8"));
  return Buffer.concat([Buffer.of(2), nonce, cipher.update(JSON.stringify(payload), "utf8"), cipher.final(), cipher.getAuthTag()]).toString("base64url");
}

function longTextSuite(mode: Mode): void {
  jest.setTimeout(180_000);
  const h = sharedHarness(mode);
  let a: Caller;
  const ids: string[] = [];
  const custom: CustomFieldTypes = new Map([
    ["fNotes", "longText"],
    ["fTitle", "text"],
    ["fLate", "longText"],
  ]);

  beforeAll(async () => {
    a = h.caller({ permissions: allPermissions });
    await a.post("/client/fields", { key: "fNotes", label: "Notes", type: "longText" }).expect(201);
    await a.post("/client/fields", { key: "fTitle", label: "Title", type: "text" }).expect(201);
    const create = async (customFields: object) => {
      const res = await a.post("/client", { firstName: `R${ids.length}`, lastName: "Q", customFields });
      expect([ids.length, res.status, res.body.error]).toEqual([ids.length, 201, undefined]);
      ids.push(res.body.data.id);
    };
    await create({ fNotes: L1, fTitle: C1 });
    await create({ fNotes: L2, fTitle: C2 });
    await create({ fNotes: L1.slice(0, 300), fTitle: "short" });
    await create({ fNotes: L1.slice(0, 3000), fTitle: C1.slice(0, 999) });
    await create({});
    await create({ fNotes: "a", fTitle: C1 });
    await create({ fNotes: "b" });
    const patched = await a.patch(`/client/${ids[6]}`, { customFields: { fNotes: L3, fTitle: C3 } });
    expect([patched.status, patched.body.error]).toEqual([200, undefined]);
    const batch = await a.post("/client/batch", {
      items: [
        { firstName: "B0", lastName: "Q", customFields: { fNotes: L1, fTitle: C2 } },
        { firstName: "B1", lastName: "Q", customFields: { fNotes: randomText(7, LONG), fTitle: randomText(8, 1000, true) } },
      ],
    });
    expect([batch.status, batch.body.error]).toEqual([201, undefined]);
    ids.push(...(batch.body.data as Array<{ id: string }>).map((record) => record.id));
    // Records holding values of a key before its definition exists: its creation writes their sort rows.
    const late = [L2, randomText(9, LONG), C3, L2.slice(0, 61_000)];
    for (const [i, value] of late.entries()) {
      await h.db.sql.query(`UPDATE ${entityDefinitions.client.table} SET "customFields" = "customFields" || $2::jsonb WHERE "id" = $1::uuid`, [
        ids[i + 2],
        JSON.stringify({ fLate: value }),
      ]);
    }
    const defined = await a.post("/client/fields", { key: "fLate", label: "Late", type: "longText" });
    expect([defined.status, defined.body.error]).toEqual([201, undefined]);
    // One in the trash: no list of live records shows it.
    await a.delete(`/client/${ids[3]}`).expect(200);
  });

  /** The reference: list-sql.ts's cast sort of the live records. */
  async function castOrder(key: string, direction: "asc" | "desc"): Promise<string[]> {
    const orderBy: OrderTerm[] = [
      { field: `customFields.${key}`, direction },
      { field: "id", direction },
    ];
    const sql = `SELECT "id" FROM ${entityDefinitions.client.table} WHERE "businessId" = $1::uuid AND "deletedAt" IS NULL ORDER BY ${orderBySql(orderBy, custom)}`;
    const { rows } = await h.db.sql.query<{ id: string }>(sql, [a.businessId]);
    return rows.map((row) => row.id);
  }

  const page = async (query: Record<string, string>) => {
    const res = await a.get(`/client?${new URLSearchParams({ include: "-contacts", fields: "id", ...query })}`);
    expect([query, res.status, res.body.error]).toEqual([query, 200, undefined]);
    return res.body as { data: Array<{ id: string }>; meta: { nextCursor: string | null } };
  };

  /** A walk of the sorted page statement (custom-sort-list.ts), `take` at a time, each page after the last record's key, as a cursor resumes. */
  async function walk(key: string, direction: "asc" | "desc", take: number, skip = 0): Promise<string[]> {
    const walked: string[] = [];
    let afterKey: unknown[] | undefined;
    for (;;) {
      const params = new SqlParams();
      const sort = { key, type: custom.get(key)!, direction };
      const base = {
        definition: entityDefinitions.client,
        businessId: a.businessId,
        deleted: "exclude",
        filter: undefined,
        custom,
        sort,
        columns: [`"id"`, `"customFields"`],
        take,
        skip,
      } as const;
      const sql = customSortPageSql(afterKey === undefined ? base : { ...base, afterKey, skip: 0 }, params);
      const { rows } = await h.db.sql.query<{ id: string; customFields: Record<string, unknown> }>(sql, params.values);
      const page = rows.slice(0, take);
      walked.push(...page.map((row) => row.id));
      if (rows.length <= take) return walked;
      const last = page[page.length - 1]!;
      afterKey = [last.customFields[key] ?? null, last.id];
    }
  }

  it.each(KEYS.flatMap((key) => (["asc", "desc"] as const).map((direction) => [key, direction] as const)))(
    "orderBy=customFields.%s:%s lists and walks every record once, in the cast sort's order",
    async (key, direction) => {
      const expected = await castOrder(key, direction);
      expect(expected).toHaveLength(ids.length - 1);
      const orderBy = `customFields.${key}:${direction}`;
      expect((await page({ orderBy, perPage: "100" })).data.map((record) => record.id)).toEqual(expected);
      for (const take of [1, 2, 3, 100]) expect([take, await walk(key, direction, take)]).toEqual([take, expected]);
      expect(await walk(key, direction, 3, 2)).toEqual(expected.slice(2));
      expect((await page({ orderBy, perPage: "4", page: "2" })).data.map((record) => record.id)).toEqual(expected.slice(4, 8));
    },
  );

  it("walks a sort on a text of 1,000 CJK characters through the API's cursor", async () => {
    for (const direction of ["asc", "desc"] as const) {
      const walked: string[] = [];
      let body = await page({ orderBy: `customFields.fTitle:${direction}`, perPage: "2" });
      walked.push(...body.data.map((record) => record.id));
      while (body.meta.nextCursor) {
        body = await page({ cursor: body.meta.nextCursor, perPage: "2" });
        walked.push(...body.data.map((record) => record.id));
      }
      expect([direction, walked]).toEqual([direction, await castOrder("fTitle", direction)]);
    }
  });

  // A cursor holds the last record's value only when it is short (list-cursor.ts): one of a
  // 65,536-character value would be larger than a request's header may be (431).
  it("walks a sort on a longText of 65,536 characters through the API's cursor", async () => {
    const body = await page({ orderBy: "customFields.fNotes:desc", where: "customFields.fNotes:gt:b", perPage: "1" });
    expect((await a.get(`/client?${new URLSearchParams({ cursor: body.meta.nextCursor!, perPage: "1" })}`)).status).toBe(200);
  });

  /** The API's walk: the first page of `query`, then its cursors, `perPage` at a time; every cursor it was given beside. */
  async function apiWalk(query: Record<string, string>, perPage: number): Promise<{ walked: string[]; cursors: string[] }> {
    const walked: string[] = [];
    const cursors: string[] = [];
    let body = await page({ ...query, perPage: String(perPage) });
    walked.push(...body.data.map((record) => record.id));
    for (let i = 0; body.meta.nextCursor !== null; i++) {
      if (i > 50) throw new Error("the walk did not end");
      cursors.push(body.meta.nextCursor);
      body = await page({ cursor: body.meta.nextCursor, perPage: String(perPage) });
      walked.push(...body.data.map((record) => record.id));
    }
    return { walked, cursors };
  }

  it.each((["fNotes", "fLate"] as const).flatMap((key) => (["desc", "asc"] as const).flatMap((direction) => [1, 2].map((perPage) => [key, direction, perPage] as const))))(
    "walks orderBy=customFields.%s:%s through the API's cursor, %i a page, in the cast sort's order, each cursor a few KB",
    async (key, direction, perPage) => {
      const { walked, cursors } = await apiWalk({ orderBy: `customFields.${key}:${direction}` }, perPage);
      const expected = await castOrder(key, direction);
      expect(walked).toEqual(expected);
      expect(cursors).toHaveLength(Math.ceil(expected.length / perPage) - 1);
      // The key's text within INLINE_KEY_BYTES, base64url of it with the rest: far under Node's 16 KB request head.
      expect(Math.max(...cursors.map((cursor) => cursor.length))).toBeLessThanOrEqual(2_000);
      // Read back filtered too: the where rides in the cursor beside the held value.
      const filtered = await apiWalk({ orderBy: `customFields.${key}:${direction}`, where: `customFields.${key}:gt:b` }, perPage);
      const selected = await page({ orderBy: `customFields.${key}:${direction}`, where: `customFields.${key}:gt:b`, perPage: "100" });
      expect(filtered.walked).toEqual(selected.data.map((record) => record.id));
    },
  );

  it("still reads a cursor written before held values, its key whole: short, and long enough to be held now", async () => {
    for (const [key, direction, at] of [
      ["fNotes", "asc", 5],
      ["fTitle", "asc", 0],
      ["fTitle", "desc", 0],
    ] as const) {
      const value = (await a.get(`/client/${ids[at]}`).expect(200)).body.data.customFields[key] as string;
      const cursor = sealedAsBefore(a.businessId, { o: `customFields.${key}:${direction}`, k: [value, ids[at]] });
      const expected = await castOrder(key, direction);
      const body = await page({ cursor, perPage: "100" });
      expect([key, direction, body.data.map((record) => record.id)]).toEqual([key, direction, expected.slice(expected.indexOf(ids[at]!) + 1)]);
    }
  });

  it("continues after a held value exactly whatever became of its record (edited, trashed, purged); retention removed it → 410000; another business's → 400019", async () => {
    const b = h.caller({ permissions: allPermissions });
    await b.post("/client/fields", { key: "fBody", label: "Body", type: "longText" }).expect(201);
    const values = [L1, L2, L3, randomText(10, LONG), randomText(11, LONG)];
    const own: string[] = [];
    for (const [i, fBody] of values.entries()) own.push((await b.post("/client", { firstName: `S${i}`, lastName: "Q", customFields: { fBody } }).expect(201)).body.data.id);
    const list = async (query: Record<string, string>) => b.get(`/client?${new URLSearchParams({ include: "-contacts", fields: "id", perPage: "1", ...query })}`);
    /** The walk one record a page: its order, and cursors[i], the cursor after order[i]. */
    const walkOnce = async () => {
      const order: string[] = [];
      const cursors: string[] = [];
      for (let res = await list({ orderBy: "customFields.fBody:asc" }); ; res = await list({ cursor: cursors[cursors.length - 1]! })) {
        expect([res.status, res.body.error]).toEqual([200, undefined]);
        order.push(res.body.data[0].id);
        if (res.body.meta.nextCursor === null) return { order, cursors };
        cursors.push(res.body.meta.nextCursor);
      }
    };
    const { order, cursors } = await walkOnce();
    expect([...order].sort()).toEqual([...own].sort());
    const bodyOf = (id: string) => values[own.indexOf(id)]!;
    const after = async (cursor: string) => {
      const res = await list({ cursor, perPage: "100" });
      return [res.status, res.status === 200 ? res.body.data.map((record: { id: string }) => record.id) : res.body];
    };

    // In the trash: the walk goes on after it.
    await b.delete(`/client/${order[0]}`).expect(200);
    expect(await after(cursors[0]!)).toEqual([200, order.slice(1)]);
    // Its value changed to one before the old (the trashed record's): the walk goes on after the old
    // value, without the record it already visited.
    await b.patch(`/client/${order[1]}`, { customFields: { fBody: bodyOf(order[0]!) } }).expect(200);
    expect(await after(cursors[1]!)).toEqual([200, order.slice(2)]);
    // Its value changed to one after the old (the last record's, a tie broken by id): it comes again, as
    // a record updated meanwhile may (extensions §E2.1); every other record after the old value once.
    await b.patch(`/client/${order[2]}`, { customFields: { fBody: bodyOf(order[4]!) } }).expect(200);
    expect(await after(cursors[2]!)).toEqual([200, [order[3], ...[order[2], order[4]].sort()]]);
    // Purged for good: the walk goes on after the value it had.
    await b.delete(`/client/${order[3]}`).expect(200);
    await b.delete(`/client/${order[3]}?permanent=true`).expect(200);
    expect(await after(cursors[3]!)).toEqual([200, [order[2], order[4]].sort()]);

    // Only the cursor's business may send it, and its value is read in that business only.
    const res = await a.get(`/client?${new URLSearchParams({ cursor: cursors[1]!, perPage: "100" })}`);
    expect([res.status, res.body.error?.code]).toEqual([400, 400019]);

    // Retention keeps a value LIST_CURSOR_VALUE_RETENTION_MS after the last cursor made with it, then the cursor has nothing to continue after.
    const rule = listCursorValueRetentionRule(h.prisma);
    await rule.deleteBatch(10_000, new Date(Date.now() + LIST_CURSOR_VALUE_RETENTION_MS - 10 * 60_000));
    expect(await after(cursors[3]!)).toEqual([200, [order[2], order[4]].sort()]);
    await rule.deleteBatch(10_000, new Date(Date.now() + LIST_CURSOR_VALUE_RETENTION_MS + 60_000));
    expect(await after(cursors[3]!)).toEqual([410, { success: false, error: { code: 410000, message: "Cursor expired" } }]);
    // A walk begun again keeps its values again.
    const again = await walkOnce();
    expect(await after(again.cursors[0]!)).toEqual([200, again.order.slice(1)]);
    // A value kept long ago is kept anew by the next cursor made with it: that cursor has the retention in full.
    await h.prisma.$executeRawUnsafe(`UPDATE "records"."ListCursorValue" SET "storedAt" = now() - interval '6 days' WHERE "businessId" = $1::uuid`, b.businessId);
    const renewed = await walkOnce();
    await rule.deleteBatch(10_000, new Date(Date.now() + LIST_CURSOR_VALUE_RETENTION_MS - 10 * 60_000));
    expect(await after(renewed.cursors[0]!)).toEqual([200, renewed.order.slice(1)]);
  });

  it.each(KEYS)("every range on %s selects what the cast comparison selects", async (key) => {
    const bounds = [L1, L1.slice(0, 3000), L1.slice(0, 300), L2, L2.slice(0, 61_000), `${L1.slice(0, 2000)}\uffff`, "a", "", C1, C1.slice(0, 999), C2, C3];
    const operators: ComparisonOperator[] = ["gt", "gte", "lt", "lte"];
    let matched = 0;
    for (const [b, bound] of bounds.entries()) {
      for (const operator of operators) {
        const condition: WhereNode = { kind: "condition", field: `customFields.${key}`, operator, value: bound };
        for (const filter of [condition, { kind: "not", condition } as WhereNode]) {
          const selected = async (customRanges: boolean) => {
            const params = new SqlParams();
            const where = listWhereSql(entityDefinitions.client, params, a.businessId, "include", filter, undefined, custom, customRanges);
            const { rows } = await h.db.sql.query<{ id: string }>(`SELECT "id" FROM ${entityDefinitions.client.table} WHERE ${where} ORDER BY "id"`, params.values);
            return rows.map((row) => row.id);
          };
          const cast = await selected(false);
          expect([b, operator, filter.kind, await selected(true)]).toEqual([b, operator, filter.kind, cast]);
          matched += cast.length;
        }
      }
    }
    expect(matched).toBeGreaterThan(0);
  });

  it("through the API: a range and a sort on a long key together", async () => {
    const body = await page({ orderBy: "customFields.fNotes:desc", where: "customFields.fNotes:gt:b", perPage: "100" });
    const expected = (await castOrder("fNotes", "desc")).filter((id) => body.data.some((record) => record.id === id));
    expect(body.data.map((record) => record.id)).toEqual(expected);
    expect(expected.length).toBeGreaterThan(0);
  });

  it("the migration gives the rows written before it, whole text that compressed into the index, the long form", async () => {
    const res = await a.post("/client", { firstName: "M", lastName: "Q", customFields: { fNotes: "x".repeat(5000), fTitle: "中".repeat(1000) } }).expect(201);
    ids.push(res.body.data.id);
    const where = `WHERE "recordId" = $1::uuid AND "key" IN ('fNotes', 'fTitle')`;
    // As the writers before WHOLE_TEXT_BYTES wrote them: the whole text, number 0.
    await h.db.sql.query(
      `UPDATE "records"."CustomFieldSortValue" SET "number" = 0, "text" = CASE "key" WHEN 'fNotes' THEN repeat('x', 5000) ELSE repeat('中', 1000) END ${where}`,
      [res.body.data.id],
    );
    const migration = readFileSync(join(__dirname, "../prisma/migrations/20261129121500_custom_field_long_sort_text/migration.sql"), "utf8");
    await h.db.sql.query(migration.replace(/^SET LOCAL.*$/m, ""));
    const { rows: after } = await h.db.sql.query<{ number: string; text: string }>(
      `SELECT "number"::text AS "number", "text" FROM "records"."CustomFieldSortValue" ${where} ORDER BY "key"`,
      [res.body.data.id],
    );
    expect(after).toEqual([
      { number: "1", text: "" },
      { number: "1", text: "" },
    ]);
    for (const direction of ["asc", "desc"] as const) {
      expect(await walk("fNotes", direction, 2)).toEqual(await castOrder("fNotes", direction));
      expect(await walk("fTitle", direction, 2)).toEqual(await castOrder("fTitle", direction));
    }
  });
}

describeEachMode("custom field values too long for a btree entry on %s", (mode) => longTextSuite(mode));
