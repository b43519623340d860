// A list page sorted on one custom field, read from its sort values (custom-field-sort.ts, D35): the
// sort index's range for the business, entity and key, in order, each row joined to its record, which
// must pass the list's own conditions (business, trash, filter: list-sql.ts). The page costs what a
// sort on an indexed column costs, where casting every record's value and sorting them all cost 27x.
//
// The order is exactly list-sql.ts's for `ORDER BY <typed value> <dir>, "id" <dir>`: records without a
// value (`absent`) last ascending and first descending, as PostgreSQL places NULLs; numbers and
// booleans by `number`, the other types by `text` in the columns' collation; ties by id.
import type { OrderTerm, WhereNode } from "@crm/query-language";
import type { CustomFieldType } from "@crm/contracts";
import type { EntityDefinition } from "../entities";
import type { DeletedMode } from "../domain/deleted-mode";
import { customFieldKey, type CustomFieldTypes } from "../domain/custom-field-query";
import { listWhereSql, type SqlParams } from "./list-sql";
import { SORT_TABLE } from "./custom-field-sort";

/** The custom field a list is sorted on, when its sort values can answer it. */
export interface CustomSort {
  key: string;
  type: CustomFieldType;
  direction: "asc" | "desc";
}

/**
 * `orderBy` as the sort values answer it: one sortable custom field, then id, in one direction (the
 * parser appends id in the last term's direction). Any other order is list-sql.ts's alone.
 */
export function customSortOf(orderBy: readonly OrderTerm[], custom: CustomFieldTypes | undefined): CustomSort | undefined {
  if (orderBy.length !== 2 || orderBy[1]!.field !== "id" || orderBy[0]!.direction !== orderBy[1]!.direction) return undefined;
  const key = customFieldKey(orderBy[0]!.field);
  const type = key === undefined ? undefined : custom?.get(key);
  if (key === undefined || type === undefined || type === "multiSelect") return undefined;
  return { key, type, direction: orderBy[0]!.direction };
}

export interface CustomSortPage {
  definition: EntityDefinition;
  businessId: string;
  deleted: DeletedMode;
  filter: WhereNode | undefined;
  custom: CustomFieldTypes;
  sort: CustomSort;
  /** The cursor's key: the value of the field on the last record read (null: none), then its id. */
  afterKey?: readonly unknown[];
  /** The record columns to read, quoted. */
  columns: readonly string[];
  take: number;
  skip: number;
  /** Ranges on custom fields from their sort values (listWhereSql; unless false). */
  customRanges?: boolean;
}

const SORT_COLUMNS = [`s."absent"`, `s."number"`, `s."text"`, `s."recordId"`];

/** The page's statement (its values in `params`); `extraColumns` are added to the select list as written. */
export function customSortPageSql(page: CustomSortPage, params: SqlParams, extraColumns = ""): string {
  const { definition, sort } = page;
  // The record's conditions inside a subquery: their column names are the record table's alone.
  const recordWhere = listWhereSql(definition, params, page.businessId, page.deleted, page.filter, undefined, page.custom, page.customRanges);
  const conditions = [`s."businessId" = ${params.add(page.businessId)}::uuid`, `s."entity" = ${params.add(definition.entity)}`, `s."key" = ${params.add(sort.key)}`];
  if (page.afterKey !== undefined) {
    const [absent, number, text] = sortColumnsOf(sort.type, page.afterKey[0] ?? null);
    const key = `(${params.add(absent)}::boolean, ${params.add(number)}::numeric, ${params.add(text)}::text, ${params.add(page.afterKey[1])}::uuid)`;
    // One row comparison: no column is NULL, so it is one range of the sort index.
    conditions.push(`(${SORT_COLUMNS.join(", ")}) ${sort.direction === "asc" ? ">" : "<"} ${key}`);
  }
  const direction = sort.direction === "asc" ? "ASC" : "DESC";
  const selected = page.columns.map((column) => `r.${column}`).join(", ");
  return `SELECT ${selected}${extraColumns} FROM ${SORT_TABLE} AS s
JOIN (SELECT ${page.columns.join(", ")} FROM ${definition.table} WHERE ${recordWhere}) AS r ON r."id" = s."recordId"
WHERE ${conditions.join(" AND ")}
ORDER BY ${SORT_COLUMNS.map((column) => `${column} ${direction}`).join(", ")} LIMIT ${page.take + 1} OFFSET ${page.skip}`;
}

/** A cursor value as the sort row holds it (custom-field-sort.ts, sortColumnsSql): absent, number, text. */
function sortColumnsOf(type: CustomFieldType, value: unknown): [boolean, number | string, string] {
  if (value === null) return [true, 0, ""];
  switch (type) {
    case "boolean":
      return [false, value === true ? 1 : 0, ""];
    case "number":
    case "integer":
      return [false, value as number, ""];
    default:
      return [false, 0, String(value)];
  }
}
