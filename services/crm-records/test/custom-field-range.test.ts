// Range filters on custom fields read from the sort values' index (D35, custom-field-range.ts) select
// exactly what the cast comparison they replace selects: both statements run side by side over every
// type's values and bounds (midnights and not, equal and between, the ends of the four-digit years),
// each operator, negated or not, live and with the trash. Then through the API: a record in the trash,
// an archived key (400019) and one brought back, and another business holding the same keys and values.
import { allPermissions } from "@crm/contracts";
import type { ComparisonOperator, WhereNode } from "@crm/query-language";
import { describeEachMode } from "@crm/testing";
import { entityDefinitions } from "../src/entities";
import type { CustomFieldTypes } from "../src/domain/custom-field-query";
import type { DeletedMode } from "../src/domain/deleted-mode";
import { listWhereSql, SqlParams } from "../src/persistence/list-sql";
import { type Caller, type Mode, sharedHarness } from "./harness";

type RangeType = "number" | "integer" | "text" | "longText" | "email" | "url" | "date" | "dateTime";

/** Per type: the values records hold (record i holds the i-th, or none), and the bounds compared with them, as the parser types them. */
const TABLE: Record<RangeType, { values: unknown[]; bounds: unknown[] }> = {
  number: {
    values: [10.5, -1.25, 0, 2, 100, 0.0001, -0.0001, 99999999999.9999, 10.5],
    bounds: ["10.5", "10.50", "-1.25", "0", "-0", "0.00005", "2", "-1000", "99999999999.9999", "123456789012345678901234567890.5"],
  },
  integer: { values: [3, -5, 0, 9007199254740991, -9007199254740991, 3, 10], bounds: [3, 0, -5, 4, 9007199254740991, -9007199254740991, 2147483648] },
  text: { values: ["Alpha", "alpha", "beta", "Z", "a b", "a-b", "10", "9", "Ärger", "alpha "], bounds: ["alpha", "Alpha", "a", "b", "", "9", "10", "Ä", "zzz", "alpha "] },
  longText: { values: ["x".repeat(1500), "y", "x", "xx"], bounds: ["x", "xx", "x".repeat(1500), "y"] },
  email: { values: ["a@x.test", "b@y.test", "A@x.test"], bounds: ["a@x.test", "b", "A"] },
  url: { values: ["https://a.test/", "http://b.test/x", "https://a.test/z"], bounds: ["https://a.test/", "https://", "http://b.test/x"] },
  date: {
    values: ["2024-01-15", "2023-12-31", "2024-01-14", "0100-01-01", "9999-12-31", "2024-01-15"],
    bounds: [
      "2024-01-15T00:00:00Z",
      "2024-01-14T12:00:00Z",
      "2024-01-15T00:00:00.001Z",
      "2023-12-31T23:59:59.999Z",
      "2024-01-15T00:30:00+01:00",
      "0100-01-01T00:00:00Z",
      "0001-06-01T00:00:00Z",
      "9999-12-31T00:00:00Z",
      "9999-12-31T12:00:00Z",
    ].map((text) => new Date(text)),
  },
  dateTime: {
    values: ["2024-01-15T10:00:00Z", "2024-01-15T09:59:59.999Z", "2023-06-01T00:00:00+02:00", "9999-12-31T23:59:59.999Z", "0100-01-01T00:00:00Z", "2024-01-15T11:00:00+01:00"],
    bounds: [
      "2024-01-15T10:00:00Z",
      "2024-01-15T11:00:00+01:00",
      "2024-01-15T09:59:59.999Z",
      "2024-01-15T09:59:59.9995Z",
      "2023-05-31T22:00:00Z",
      "2024-01-15",
      "0100-01-01T00:00:00Z",
      "0099-12-31T23:59:59Z",
      "9999-12-31T23:59:59.999Z",
    ].map((text) => new Date(text)),
  },
};
const TYPES = Object.keys(TABLE) as RangeType[];
const OPERATORS: ComparisonOperator[] = ["gt", "gte", "lt", "lte"];
/** The key of each type's field: `f<Type>` (`email` alone would be the client's built-in field). */
const keyOf = (type: RangeType) => `f${type[0]!.toUpperCase()}${type.slice(1)}`;
const RECORDS = Math.max(...TYPES.map((type) => TABLE[type].values.length)) + 1;

function rangeSuite(mode: Mode): void {
  jest.setTimeout(120_000);
  const h = sharedHarness(mode);
  let a: Caller;
  let other: Caller;
  const ids: string[] = [];
  const custom: CustomFieldTypes = new Map(TYPES.map((type) => [keyOf(type), type]));

  async function defineAll(caller: Caller): Promise<void> {
    for (const type of TYPES) await caller.post("/client/fields", { key: keyOf(type), label: type, type }).expect(201);
  }
  const valuesOf = (i: number) => Object.fromEntries(TYPES.flatMap((type) => (i < TABLE[type].values.length ? [[keyOf(type), TABLE[type].values[i]]] : [])));

  beforeAll(async () => {
    a = h.caller({ permissions: allPermissions });
    other = h.caller({ permissions: allPermissions });
    await defineAll(a);
    await defineAll(other);
    for (let i = 0; i < RECORDS; i++) {
      ids.push((await a.post("/client", { firstName: `R${i}`, lastName: "Q", customFields: valuesOf(i) }).expect(201)).body.data.id);
      await other.post("/client", { firstName: `R${i}`, lastName: "Q", customFields: valuesOf(i) }).expect(201);
    }
    // Record 1 in the trash: its sort rows are kept, and only deleted=include|only may show it.
    await a.delete(`/client/${ids[1]}`).expect(200);
  });

  /** The ids the list statement's WHERE selects, ranges from the sort values or cast. */
  async function selected(filter: WhereNode, deleted: DeletedMode, customRanges: boolean): Promise<string[]> {
    const params = new SqlParams();
    const where = listWhereSql(entityDefinitions.client, params, a.businessId, deleted, filter, undefined, custom, customRanges);
    const { rows } = await h.db.sql.query<{ id: string }>(`SELECT "id" FROM ${entityDefinitions.client.table} WHERE ${where} ORDER BY "id"`, params.values);
    return rows.map((row) => row.id);
  }

  it.each(TYPES)("every range on a %s field selects what the cast comparison selects", async (type) => {
    let matched = 0;
    for (const bound of TABLE[type].bounds) {
      for (const operator of OPERATORS) {
        const condition: WhereNode = { kind: "condition", field: `customFields.${keyOf(type)}`, operator, value: bound as never };
        for (const filter of [condition, { kind: "not", condition } as WhereNode]) {
          for (const deleted of ["exclude", "include"] as const) {
            const [fromSortValues, cast] = [await selected(filter, deleted, true), await selected(filter, deleted, false)];
            expect([String(bound), operator, filter.kind, deleted, fromSortValues]).toEqual([String(bound), operator, filter.kind, deleted, cast]);
            matched += cast.length;
          }
        }
      }
    }
    expect(matched).toBeGreaterThan(0);
  });

  it("ranges combine with other conditions and read the sort values' index, never another business's rows", async () => {
    const ranges: WhereNode = {
      kind: "and",
      conditions: [
        { kind: "condition", field: "customFields.fNumber", operator: "gt", value: "1" },
        { kind: "condition", field: "customFields.fText", operator: "lte", value: "alpha" },
      ],
    };
    const notBefore: WhereNode = { kind: "not", condition: { kind: "condition", field: "customFields.fDate", operator: "lt", value: new Date("2024-01-01T00:00:00Z") } };
    const filter: WhereNode = { kind: "or", conditions: [ranges, notBefore] };
    expect(await selected(filter, "include", true)).toEqual(await selected(filter, "include", false));
    const sortValues = (key: string) =>
      `SELECT v."recordId" FROM "records"."CustomFieldSortValue" AS v WHERE v."businessId" = $1::uuid AND v."entity" = 'client' AND v."key" = ${key}`;
    // Under OR or NOT each record is looked up in the selected ids (IN hashes them); a range every record
    // must meet (under ANDs alone) names the records to read, by id.
    const where = listWhereSql(entityDefinitions.client, new SqlParams(), a.businessId, "exclude", filter, undefined, custom);
    expect([where.includes(`("id" IN (${sortValues("$2")}`), where.includes("ANY(ARRAY(SELECT v.")]).toEqual([true, false]);
    const both: WhereNode = { kind: "and", conditions: [ranges, notBefore] };
    expect(await selected(both, "include", true)).toEqual(await selected(both, "include", false));
    const conjunct = listWhereSql(entityDefinitions.client, new SqlParams(), a.businessId, "exclude", both, undefined, custom);
    expect(conjunct).toContain(`("id" = ANY(ARRAY(${sortValues("$2")}`);
    expect(conjunct).toContain(`NOT ("id" IN (${sortValues("$7")}`);
  });

  const listed = async (caller: Caller, query: string) => {
    const res = await caller.get(`/client?perPage=100&${query}`);
    expect([query, res.status, res.body.error]).toEqual([query, 200, undefined]);
    return (res.body.data as Array<{ id: string }>).map((record) => ids.indexOf(record.id)).sort((x, y) => x - y);
  };

  it("through the API: the trash, the other business, an archived key (400019) and one brought back", async () => {
    expect(await listed(a, "where=customFields.fInteger:gte:3")).toEqual([0, 3, 5, 6]);
    expect(await listed(a, "where=customFields.fInteger:gte:3&deleted=include")).toEqual([0, 3, 5, 6]);
    expect(await listed(a, "where=customFields.fNumber:lt:0&deleted=only")).toEqual([1]);
    expect(await listed(a, "where=customFields.fNumber:lt:0")).toEqual([6]);
    expect(await listed(a, "where=NOT:customFields.fDateTime:lt:2024-01-15T10:00:00Z")).toEqual([0, 3, 5, 6, 7, 8, 9, 10]);
    // The other business's records hold the same keys and values: none is ours (indexOf -1).
    const res = await other.get("/client?perPage=100&where=customFields.fInteger:gte:3").expect(200);
    expect(res.body.data.map((record: { id: string }) => ids.includes(record.id))).toEqual([false, false, false, false]);
    await a.delete("/client/fields/fInteger").expect(200);
    const refused = await a.get("/client?where=customFields.fInteger:gte:3");
    expect([refused.status, refused.body.error?.code, refused.body.error?.details?.[0]?.path]).toEqual([400, 400019, "where"]);
    await a.patch("/client/fields/fInteger", { isArchived: false }).expect(200);
    expect(await listed(a, "where=customFields.fInteger:gte:3")).toEqual([0, 3, 5, 6]);
  });
}

describeEachMode("custom field ranges from the sort values on %s", (mode) => rangeSuite(mode));
