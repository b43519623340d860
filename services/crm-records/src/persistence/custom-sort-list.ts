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
import { LONG_TEXT, longValueRecordIds, SORT_TABLE, sortColumnsOf, sortedByText } from "./custom-field-sort";

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
  const business = params.add(page.businessId);
  const entity = params.add(definition.entity);
  const key = params.add(sort.key);
  const scope = [`s."businessId" = ${business}::uuid`, `s."entity" = ${entity}`, `s."key" = ${key}`];
  const after = page.afterKey === undefined ? undefined : cursorOf(page, params);
  const comparison = sort.direction === "asc" ? ">" : "<";
  // One row comparison: no column is NULL, so it is one range of the sort index.
  const conditions = after === undefined ? scope : [...scope, `(${SORT_COLUMNS.join(", ")}) ${comparison} (${after.absent}, ${after.number}, ${after.text}, ${after.id})`];
  const direction = sort.direction === "asc" ? "ASC" : "DESC";
  const selected = page.columns.map((column) => `r.${column}`).join(", ");
  const records = `(SELECT ${page.columns.join(", ")} FROM ${definition.table} WHERE ${recordWhere}) AS r ON r."id" = s."recordId"`;
  const indexOrder = `ORDER BY ${SORT_COLUMNS.map((column) => `${column} ${direction}`).join(", ")}`;
  if (!sortedByText(sort.type)) {
    return `SELECT ${selected}${extraColumns} FROM ${SORT_TABLE} AS s
JOIN ${records}
WHERE ${conditions.join(" AND ")}
${indexOrder} LIMIT ${page.take + 1} OFFSET ${page.skip}`;
  }
  // Text: the values held whole, in index order, merged with the values too long for the index
  // (LONG_TEXT, custom-field-sort.ts), sorted by the record's own value; the merge orders both by the
  // value itself, as list-sql.ts does, so the order is its own in any collation. The long values are
  // few where the index matters: each page sorts those after the cursor, read by id from the list of
  // the key's long rows (longValueRecordIds), never by a plan the statistics choose.
  const reach = page.take + 1 + page.skip;
  const longAfter = after === undefined ? "" : `\nWHERE (false, r."sortText", r."id") ${comparison} (${after.absent}, ${after.text}, ${after.id})`;
  const longRecords = `(SELECT ${page.columns.join(", ")}, "customFields" ->> ${key} AS "sortText" FROM ${definition.table}
  WHERE ${recordWhere} AND "id" = ${longValueRecordIds(business, entity, key)}) AS r`;
  return `SELECT ${page.columns.map((column) => `u.${column}`).join(", ")}${extraColumns} FROM (
(SELECT ${selected}, s."absent" AS "sortAbsent", s."text" AS "sortText", s."recordId" AS "sortId" FROM ${SORT_TABLE} AS s
JOIN ${records}
WHERE ${conditions.join(" AND ")} AND s."number" <> ${LONG_TEXT}
${indexOrder} LIMIT ${reach} OFFSET 0)
UNION ALL
(SELECT ${selected}, false, r."sortText", r."id" FROM ${longRecords}${longAfter}
ORDER BY r."sortText" ${direction}, r."id" ${direction} LIMIT ${reach})
) AS u ORDER BY u."sortAbsent" ${direction}, u."sortText" ${direction}, u."sortId" ${direction} LIMIT ${page.take + 1} OFFSET ${page.skip}`;
}

/** The cursor's key as placeholders of the sort row's columns. */
function cursorOf(page: CustomSortPage, params: SqlParams): { absent: string; number: string; text: string; id: string } {
  const [absent, number, text] = sortColumnsOf(page.sort.type, page.afterKey![0] ?? null);
  return { absent: `${params.add(absent)}::boolean`, number: `${params.add(number)}::numeric`, text: `${params.add(text)}::text`, id: `${params.add(page.afterKey![1])}::uuid` };
}
