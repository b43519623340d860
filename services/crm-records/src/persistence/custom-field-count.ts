// The total of a list whose filter is one `eq` on a custom field (D36), counted from the sort values'
// index (custom-field-sort.ts) instead of the records that the GIN index finds (list-sql.ts): the key's
// rows holding that value are one range of the index, read without the records, where containment
// reads and rechecks every matching record's values (80,000 of them cost the total 2x a built-in
// field's, whose count reads its own index alone).
//
// It counts exactly what `count(*) ... WHERE <the list's conditions>` counts, because:
// - every record of the business and entity has a row per sortable definition, written in the same
//   transaction as its values (the create's CTE, syncSortValues, a definition's own rows), so one
//   statement's snapshot sees rows and values alike; a record created while a definition was being
//   added holds no value of it, and `eq` never matches an absent value;
// - the row holds the value as the filter compares it: booleans and numbers in `number` (numeric
//   equality is jsonb's), every other type's stored text in `text`, whole up to WHOLE_TEXT_BYTES
//   (a longer value is marked LONG_TEXT, and an `eq` value that long is counted the usual way);
// - trashed records keep their rows: a live total takes off the business's trashed records that match,
//   read through the trash's partial index: a cost that grows with the business's trash (usually
//   small), never with the live matches or with other businesses' values.
import type { CustomFieldType } from "@crm/contracts";
import type { WhereNode } from "@crm/query-language";
import type { EntityDefinition } from "../entities";
import type { DeletedMode } from "../domain/deleted-mode";
import { customFieldKey, type CustomFieldTypes } from "../domain/custom-field-query";
import { customLeaf, dayOf } from "./custom-field-sql";
import { isSortable, SORT_TABLE, sortColumnsOf, WHOLE_TEXT_BYTES } from "./custom-field-sort";
import type { SqlParams } from "./list-sql";

/** An `eq` value (as the parser types it) as it is stored: dates as their text; undefined when none can equal it. */
function storedValue(type: CustomFieldType, value: unknown): unknown {
  if (type === "date") return value instanceof Date ? dayOf(value) : undefined;
  if (type === "dateTime") return (value as Date).toISOString();
  return value;
}

/** The sort row (`number`, `text`) of the values equal to `value`; undefined when no row can say it. */
function equalRow(type: CustomFieldType, value: unknown): { number: string; text: string } | undefined {
  if (value === null || value === undefined) return undefined;
  const stored = storedValue(type, value);
  if (stored === undefined) return undefined;
  const [, number, text] = sortColumnsOf(type, stored);
  return Buffer.byteLength(text) > WHOLE_TEXT_BYTES ? undefined : { number: String(number), text };
}

/** The filter's one `eq` on a sortable custom field, when that is all it is. */
function customEquality(filter: WhereNode | undefined, custom: CustomFieldTypes | undefined) {
  const node = filter?.kind === "and" && filter.conditions.length === 1 ? filter.conditions[0] : filter;
  if (node?.kind !== "condition" || node.operator !== "equals") return undefined;
  const key = customFieldKey(node.field);
  const type = key === undefined ? undefined : custom?.get(key);
  if (key === undefined || type === undefined || !isSortable({ type })) return undefined;
  const row = equalRow(type, node.value);
  return row && { node, key, type, row };
}

/**
 * The statement (one `total` column) counting the records of a list filtered by one `eq` on a custom
 * field, from the sort values; undefined for any other list, or `deleted=only` (trashed records are
 * few: the usual count reads them through the trash's index).
 */
export function customEqualityCountSql(
  definition: EntityDefinition,
  params: SqlParams,
  businessId: string,
  deleted: DeletedMode,
  filter: WhereNode | undefined,
  custom: CustomFieldTypes | undefined,
): string | undefined {
  const equality = deleted === "only" ? undefined : customEquality(filter, custom);
  if (!equality) return undefined;
  const business = params.add(businessId);
  const rows = `(SELECT count(*) FROM ${SORT_TABLE} WHERE "businessId" = ${business}::uuid AND "entity" = ${params.add(definition.entity)}
  AND "key" = ${params.add(equality.key)} AND "absent" = false AND "number" = ${params.add(equality.row.number)}::numeric AND "text" = ${params.add(equality.row.text)}::text)`;
  if (deleted === "include") return `SELECT ${rows} AS "total"`;
  // OFFSET 0 keeps the containment out of the scan: the trash's index selects, the values are checked after.
  const trashed = `(SELECT count(*) FROM (SELECT "customFields" FROM ${definition.table} WHERE "businessId" = ${business}::uuid AND "deletedAt" IS NOT NULL OFFSET 0) AS t
  WHERE ${customLeaf(params, equality.key, equality.type, equality.node)})`;
  return `SELECT ${rows} - ${trashed} AS "total"`;
}
