// The total of a list filtered by one `eq` on a custom field, counted from the sort values (D36,
// custom-field-count.ts), is the total the records' own count gives (RECORDS_CUSTOM_COUNTS=false): both
// statements side by side for every sortable type's values (equal as text or as numbers, long text, a
// date against a midnight and not), live and with the trash, beside another business holding the same
// values. Then through the API: meta.total after a trash, a restore, an update and a purge, on both settings.
import { allPermissions, type CustomFieldType } from "@crm/contracts";
import type { WhereNode } from "@crm/query-language";
import { describeEachMode } from "@crm/testing";
import { entityDefinitions } from "../src/entities";
import type { CustomFieldTypes } from "../src/domain/custom-field-query";
import type { DeletedMode } from "../src/domain/deleted-mode";
import { customEqualityCountSql } from "../src/persistence/custom-field-count";
import { listWhereSql, SqlParams } from "../src/persistence/list-sql";
import { type Caller, type Harness, type Mode, openHarness, sharedHarness } from "./harness";

/** Per type: the values records hold (record i holds the i-th, or none), and the values `eq` is asked for, as the parser types them. */
const TABLE: Partial<Record<CustomFieldType, { values: unknown[]; asked: unknown[]; options?: string[] }>> = {
  boolean: { values: [true, false, true, true], asked: [true, false] },
  number: { values: [10.5, -1.25, 0, 10.5, 2], asked: ["10.5", "10.50", "-1.25", "0", "-0", "3"] },
  integer: { values: [3, -5, 0, 3, 9007199254740991], asked: [3, 0, -5, 9007199254740991, 4] },
  text: { values: ["Alpha", "alpha", "alpha ", "Ärger", "x".repeat(1000), "x".repeat(1000)], asked: ["Alpha", "alpha", "alpha ", "Ärger", "x".repeat(1000), "zzz"] },
  // 1,500 "é" are 3,000 bytes: marked long in the sort values; 999 are 1,998 bytes, held whole.
  longText: { values: ["é".repeat(1500), "y", "é".repeat(1500), "é".repeat(999)], asked: ["é".repeat(1500), "y", "é".repeat(999)] },
  email: { values: ["a@x.test", "A@x.test", "a@x.test"], asked: ["a@x.test", "A@x.test", "b@x.test"] },
  url: { values: ["https://a.test/", "https://a.test/z"], asked: ["https://a.test/", "https://a.test"] },
  select: { values: ["open", "won", "open"], asked: ["open", "won", "lost"], options: ["open", "won", "lost"] },
  date: {
    values: ["2024-01-15", "2023-12-31", "2024-01-15"],
    asked: ["2024-01-15T00:00:00Z", "2024-01-15T12:00:00Z", "2023-12-31T00:00:00Z"].map((text) => new Date(text)),
  },
  dateTime: {
    values: ["2024-01-15T10:00:00Z", "2024-01-15T11:00:00+01:00", "2023-06-01T00:00:00Z"],
    asked: ["2024-01-15T10:00:00Z", "2024-01-15T10:00:00.001Z", "2023-06-01T00:00:00Z"].map((text) => new Date(text)),
  },
};
const TYPES = Object.keys(TABLE) as CustomFieldType[];
const keyOf = (type: CustomFieldType) => `f${type[0]!.toUpperCase()}${type.slice(1)}`;
const RECORDS = Math.max(...TYPES.map((type) => TABLE[type]!.values.length)) + 1;
const condition = (type: CustomFieldType, value: unknown): WhereNode => ({ kind: "condition", field: `customFields.${keyOf(type)}`, operator: "equals", value: value as never });

async function defineAll(caller: Caller): Promise<void> {
  for (const type of TYPES) {
    const options = TABLE[type]!.options;
    await caller.post("/client/fields", { key: keyOf(type), label: type, type, ...(options ? { options } : {}) }).expect(201);
  }
}
const valuesOf = (i: number) => Object.fromEntries(TYPES.flatMap((type) => (i < TABLE[type]!.values.length ? [[keyOf(type), TABLE[type]!.values[i]]] : [])));

function countSuite(mode: Mode): void {
  jest.setTimeout(120_000);
  const h = sharedHarness(mode);
  let a: Caller;
  const ids: string[] = [];
  const custom: CustomFieldTypes = new Map(TYPES.map((type) => [keyOf(type), type]));

  beforeAll(async () => {
    a = h.caller({ permissions: allPermissions });
    const other = h.caller({ permissions: allPermissions });
    await defineAll(a);
    await defineAll(other);
    for (let i = 0; i < RECORDS; i++) {
      ids.push((await a.post("/client", { firstName: `R${i}`, lastName: "Q", customFields: valuesOf(i) }).expect(201)).body.data.id);
      await other.post("/client", { firstName: `R${i}`, lastName: "Q", customFields: valuesOf(i) }).expect(201);
    }
    // Record 0 in the trash: its sort rows are kept, and a live total must not count it.
    await a.delete(`/client/${ids[0]}`).expect(200);
  });

  /** The list's total as the records' count gives it, and as the sort values give it (undefined: that statement does not apply). */
  async function totals(filter: WhereNode, deleted: DeletedMode): Promise<[number, number | undefined]> {
    const params = new SqlParams();
    const where = listWhereSql(entityDefinitions.client, params, a.businessId, deleted, filter, undefined, custom);
    const counted = await h.db.sql.query<{ total: string }>(`SELECT count(*) AS "total" FROM ${entityDefinitions.client.table} WHERE ${where}`, params.values);
    const own = new SqlParams();
    const sql = customEqualityCountSql(entityDefinitions.client, own, a.businessId, deleted, filter, custom);
    const fromSortValues = sql === undefined ? undefined : Number((await h.db.sql.query<{ total: string }>(sql, own.values)).rows[0]!.total);
    return [Number(counted.rows[0]!.total), fromSortValues];
  }

  it.each(TYPES)("every eq on a %s field counts from its sort values what the records' count counts", async (type) => {
    let counted = 0;
    for (const value of TABLE[type]!.asked) {
      for (const deleted of ["exclude", "include"] as const) {
        const [records, sortValues] = await totals(condition(type, value), deleted);
        // A value too long for the sort index, or a date off midnight (no date equals it), is counted the usual way.
        const long = typeof value === "string" && Buffer.byteLength(value) > 2000;
        const offMidnight = type === "date" && (value as Date).getTime() % 86_400_000 !== 0;
        expect([String(value).slice(0, 20), deleted, sortValues]).toEqual([String(value).slice(0, 20), deleted, long || offMidnight ? undefined : records]);
        counted += records;
      }
    }
    expect(counted).toBeGreaterThan(0);
  });

  it("applies to one eq alone, never to null, other operators, more conditions, multiSelect or the trash alone", async () => {
    const one = condition("boolean", true);
    const cases: Array<[WhereNode, DeletedMode]> = [
      [condition("boolean", null), "exclude"],
      [{ ...condition("integer", 3), operator: "gt" } as WhereNode, "exclude"],
      [{ kind: "and", conditions: [one, condition("integer", 3)] }, "exclude"],
      [{ kind: "not", condition: one }, "exclude"],
      [{ kind: "condition", field: "lastName", operator: "equals", value: "Q" }, "exclude"],
      [one, "only"],
    ];
    for (const [filter, deleted] of cases) expect((await totals(filter, deleted))[1]).toBeUndefined();
    const [records, sortValues] = await totals({ kind: "and", conditions: [one] }, "exclude");
    expect(sortValues).toBe(records);
    expect(records).toBe(2);
  });
}

/** meta.total of one eq through the API, on a harness with D36 on or off. */
function apiSuite(mode: Mode, customCounts: boolean): void {
  jest.setTimeout(120_000);
  let h: Harness;
  beforeAll(async () => {
    h = await openHarness(mode, { config: { RECORDS_CUSTOM_COUNTS: String(customCounts) } });
  });
  afterAll(async () => {
    await h?.close();
  });

  it(`meta.total follows trash, restore, update and purge (RECORDS_CUSTOM_COUNTS=${customCounts})`, async () => {
    const a = h.caller({ permissions: allPermissions });
    const other = h.caller({ permissions: allPermissions });
    for (const caller of [a, other]) await caller.post("/client/fields", { key: "stage", label: "Stage", type: "select", options: ["open", "won"] }).expect(201);
    const created: string[] = [];
    for (let i = 0; i < 4; i++) created.push((await a.post("/client", { firstName: "A", lastName: `${i}`, customFields: { stage: "open" } }).expect(201)).body.data.id);
    await other.post("/client", { firstName: "B", lastName: "0", customFields: { stage: "open" } }).expect(201);
    const total = async (deleted = "exclude") => (await a.get(`/client?where=customFields.stage:open&deleted=${deleted}`).expect(200)).body.meta.total;
    expect(await total()).toBe(4);
    await a.delete(`/client/${created[0]}`).expect(200);
    expect([await total(), await total("include"), await total("only")]).toEqual([3, 4, 1]);
    await a.post(`/client/${created[0]}/restore`).expect(200);
    await a.patch(`/client/${created[1]}`, { customFields: { stage: "won" } }).expect(200);
    expect([await total(), await total("include")]).toEqual([3, 3]);
    await a.delete(`/client/${created[2]}`).expect(200);
    expect([await total(), await total("include")]).toEqual([2, 3]);
    await a.delete(`/client/${created[2]}?permanent=true`).expect(200);
    expect([await total(), await total("include")]).toEqual([2, 2]);
  });
}

describeEachMode("custom field eq totals from the sort values on %s", (mode) => countSuite(mode));
describeEachMode("custom field eq totals through the API on %s, D36 on", (mode) => apiSuite(mode, true));
describeEachMode("custom field eq totals through the API on %s, D36 off", (mode) => apiSuite(mode, false));
