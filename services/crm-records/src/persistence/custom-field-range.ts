// A range condition (gt, gte, lt, lte) on a custom field, read from its sort values (custom-field-sort.ts,
// D35) instead of casting `customFields ->> key` on every record of the business: the records whose sort
// row for the key lies in one range of the sort index. It selects exactly what the cast comparison of
// custom-field-sql.ts selects, because the row holds the same value in an order-preserving form:
// - number, integer: `number` is the value as numeric, the cast's own type;
// - text, longText, email, url: `text` is the stored text, compared in the same collation;
// - dateTime: `text` is the UTC `toISOString()` text the value is stored as (custom-field-values.ts,
//   years 0100-9999), so comparing it with the bound's own such text orders instants;
// - date: `text` is `YYYY-MM-DD`, which the cast reads as midnight UTC; against a bound that is not a
//   midnight, `>=` becomes `>` and `<` becomes `<=` of the bound's day.
// A record without a value has `absent` and no value range includes it, as a NULL cast compares false.
// select, multiSelect and boolean take no range (the parser refuses them), so they never come here.
import type { ComparisonOperator } from "@crm/query-language";
import type { CustomFieldType } from "@crm/contracts";
import type { SqlParams } from "./list-sql";
import { longValueRecordIds, SORT_TABLE } from "./custom-field-sort";

/** Where a statement's sort value conditions find the list's business and entity (their placeholders) and its records' table. */
export interface SortValuesScope {
  business: string;
  entity: string;
  table: string;
  /** Whether every record the statement selects must meet the condition (not negated, under no OR): see selectedIds. */
  conjunct: boolean;
}

const OPERATORS = { gt: ">", gte: ">=", lt: "<", lte: "<=" } as const;
/** A stored date or dateTime's text: a four-digit year first (custom-field-values.ts). */
const FOUR_DIGIT_YEAR = /^\d{4}-/;
const DAY_MS = 86_400_000;

/** The sort row condition of `column operator bound`, or TRUE/FALSE when every or no value satisfies it. */
type RowCondition = { column: `"number"` | `"text"`; operator: ComparisonOperator; bound: unknown; cast: string } | boolean;

/** A bound instant as the text of the stored values it is compared with: past the four-digit years, every value is on one side. */
function instantCondition(operator: ComparisonOperator, bound: Date, asDay: boolean): RowCondition {
  const iso = bound.toISOString();
  if (!FOUR_DIGIT_YEAR.test(iso)) {
    const greaterThanAll = iso.startsWith("+");
    return (operator === "lt" || operator === "lte") === greaterThanAll;
  }
  if (!asDay) return { column: `"text"`, operator, bound: iso, cast: "::text" };
  const midnight = bound.getTime() % DAY_MS === 0;
  // A day's midnight d, against an instant inside day b: d > it and d >= it when d > b; d < it and d <= it when d <= b.
  const dayOperator = midnight ? operator : operator === "gte" ? "gt" : operator === "lt" ? "lte" : operator;
  return { column: `"text"`, operator: dayOperator, bound: iso.slice(0, 10), cast: "::text" };
}

function rowCondition(type: CustomFieldType, operator: ComparisonOperator, value: unknown): RowCondition {
  switch (type) {
    case "number":
    case "integer":
      return { column: `"number"`, operator, bound: value, cast: "::numeric" };
    case "date":
    case "dateTime":
      return instantCondition(operator, value as Date, type === "date");
    case "text":
    case "longText":
    case "email":
    case "url":
      return { column: `"text"`, operator, bound: value, cast: "::text" };
    default:
      throw new Error(`custom field type ${type} takes no range`);
  }
}

/**
 * `key operator value` on the records of the list's table (written as its unqualified `"id"`), from the
 * sort values; `cast` writes the cast comparison on the unqualified `"customFields"`, which decides for
 * the values too long for the index (LONG_TEXT, custom-field-sort.ts): few, each read from its record.
 */
export function sortValueRange(
  params: SqlParams,
  scope: SortValuesScope,
  key: string,
  type: CustomFieldType,
  operator: ComparisonOperator,
  value: unknown,
  cast: () => string,
): string {
  const condition = rowCondition(type, operator, value);
  if (condition === false) return "(FALSE)";
  const keyPlaceholder = params.add(key);
  const rows = [`v."businessId" = ${scope.business}::uuid`, `v."entity" = ${scope.entity}`, `v."key" = ${keyPlaceholder}`, `v."absent" = false`];
  if (condition === true || condition.column === `"number"`) {
    if (condition !== true) rows.push(`v."number" ${OPERATORS[condition.operator]} ${params.add(condition.bound)}${condition.cast}`);
    return selectedIds(scope, `SELECT v."recordId" FROM ${SORT_TABLE} AS v WHERE ${rows.join(" AND ")}`);
  }
  // Text held whole has number 0, so its comparison is a range of the index after (absent, number).
  const whole = [...rows, `v."number" = 0`, `v."text" ${OPERATORS[condition.operator]} ${params.add(condition.bound)}${condition.cast}`];
  const long = `SELECT x."id" FROM ${scope.table} AS x WHERE x."id" = ${longValueRecordIds(scope.business, scope.entity, keyPlaceholder)} AND ${cast()}`;
  return selectedIds(
    scope,
    `SELECT v."recordId" FROM ${SORT_TABLE} AS v WHERE ${whole.join(" AND ")}
    UNION ALL ${long}`,
  );
}

/**
 * The records whose ids `select` lists. A conjunct: as an array read once before the list's records (its
 * init plan), so the list finds them by id (its primary key), however many the planner guessed. As
 * `"id" IN (select)`, a guess of thousands where 79 matched (the sort rows' statistics mix every business
 * and key) made it walk 48,844 records of a business in the list's order, each compared with the 79 ids:
 * 91 ms, 1.0 by id. Under NOT or OR the records are read some other way and each is looked up in the
 * list: `IN` hashes it, where `= ANY` of an array that is no constant compares each record with every id.
 */
function selectedIds(scope: SortValuesScope, select: string): string {
  return scope.conjunct ? `("id" = ANY(ARRAY(${select})))` : `("id" IN (${select}))`;
}
