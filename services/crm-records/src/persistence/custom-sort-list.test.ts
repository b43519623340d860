import type { OrderTerm } from "@crm/query-language";
import { entityDefinitions } from "../entities";
import { customSortOf, customSortPageSql } from "./custom-sort-list";
import { SqlParams } from "./list-sql";

const custom = new Map([
  ["n", "number"],
  ["vip", "boolean"],
  ["code", "text"],
  ["tags", "multiSelect"],
] as const);
const order = (...terms: Array<[string, "asc" | "desc"]>): OrderTerm[] => terms.map(([field, direction]) => ({ field, direction }));

describe("a list sorted on one custom field, from its sort values", () => {
  it("answers exactly one sortable custom field then id, in one direction; any other order is list-sql.ts's", () => {
    expect(customSortOf(order(["customFields.n", "desc"], ["id", "desc"]), custom)).toEqual({ key: "n", type: "number", direction: "desc" });
    expect(customSortOf(order(["customFields.n", "asc"], ["firstName", "asc"], ["id", "asc"]), custom)).toBeUndefined();
    expect(customSortOf(order(["firstName", "asc"], ["id", "asc"]), custom)).toBeUndefined();
    expect(customSortOf(order(["customFields.tags", "asc"], ["id", "asc"]), custom)).toBeUndefined();
    expect(customSortOf(order(["customFields.gone", "asc"], ["id", "asc"]), custom)).toBeUndefined();
    expect(customSortOf(order(["customFields.n", "asc"], ["id", "desc"]), custom)).toBeUndefined();
  });

  it("walks the sort index from the cursor's key as one row comparison, the record's conditions in a subquery", () => {
    const base = { definition: entityDefinitions.client, businessId: "b", deleted: "exclude", filter: undefined, custom, columns: [`"id"`], take: 20, skip: 0 } as const;
    const cases: Array<[string, "asc" | "desc", unknown, unknown[]]> = [
      ["vip", "desc", true, [false, 1, ""]],
      ["n", "asc", 10.5, [false, 10.5, ""]],
      ["code", "asc", "Alpha", [false, 0, "Alpha"]],
      ["code", "desc", null, [true, 0, ""]],
    ];
    for (const [key, direction, value, columns] of cases) {
      const params = new SqlParams();
      const sql = customSortPageSql({ ...base, sort: { key, type: custom.get(key as "n")!, direction }, afterKey: [value, "id-1"] }, params);
      const dir = direction === "asc" ? "ASC" : "DESC";
      expect(sql).toContain(`(s."absent", s."number", s."text", s."recordId") ${direction === "asc" ? ">" : "<"} ($5::boolean, $6::numeric, $7::text, $8::uuid)`);
      expect(sql).toContain(`ORDER BY s."absent" ${dir}, s."number" ${dir}, s."text" ${dir}, s."recordId" ${dir} LIMIT 21 OFFSET 0`);
      expect(sql).toContain(`JOIN (SELECT "id" FROM "records"."Client" WHERE "businessId" = $1::uuid AND "deletedAt" IS NULL) AS r`);
      expect(params.values).toEqual(["b", "b", "client", key, ...columns, "id-1"]);
      // Text: the records of the key's long values by id, from their sort rows, whatever the statistics estimate.
      const long = `"id" = ANY(ARRAY(SELECT l."recordId" FROM "records"."CustomFieldSortValue" AS l WHERE l."businessId" = $2::uuid AND l."entity" = $3 AND l."key" = $4 AND l."absent" = false AND l."number" = 1))`;
      expect([key, sql.includes(long)]).toEqual([key, key === "code"]);
    }
  });
});
