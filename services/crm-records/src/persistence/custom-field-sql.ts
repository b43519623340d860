// A custom field's conditions and sort expression in a list's SQL (list-sql.ts; extensions §E4).
// Values live in the record's jsonb `customFields`, typed by their definition (custom-field-values.ts:
// numbers as JSON numbers, a date as `YYYY-MM-DD`, a dateTime as UTC `toISOString()` text), so:
// - `eq` is jsonb containment, `"customFields" @> {"key": value}`, which the GIN index answers (D35)
//   for every type; on a multiSelect `{"key": [option]}` is "holds this option";
// - ranges and sorts read the value cast to its type: numbers as `numeric`, dates and dateTimes as
//   instants (a date is midnight UTC, decisions §3), text as text (the columns' collation); a list's
//   ranges read the same order from the sort values' index instead (custom-field-range.ts, D35);
// - the substring operators are ILIKE on the text, escaped like a column's.
// Every value is a bound parameter. The key is written into the statement (so the planner can match
// an expression index on it), and only after it matched the definitions' key pattern, which admits
// no quote, backslash or space: the parser admitted only active definitions' keys anyway.
import { CUSTOM_FIELD_KEY_PATTERN, type CustomFieldType } from "@crm/contracts";
import { escapeLike, type ConditionNode } from "@crm/query-language";
import type { SqlParams } from "./list-sql";
import { type SortValuesScope, sortValueRange } from "./custom-field-range";

const COLUMN = `"customFields"`;
const RANGES = { gt: ">", gte: ">=", lt: "<", lte: "<=" } as const;

function keyLiteral(key: string): string {
  if (!CUSTOM_FIELD_KEY_PATTERN.test(key)) throw new Error(`"${key}" is not a custom field key`);
  return `'${key}'`;
}

/** The stored value as text (NULL when the record has none). */
function textOf(key: string): string {
  return `(${COLUMN} ->> ${keyLiteral(key)})`;
}

/** What ORDER BY and the keyset compare: the value cast to its type. A multiSelect is never sorted (custom-field-query.ts). */
export function customSortExpression(key: string, type: CustomFieldType): string {
  switch (type) {
    case "number":
    case "integer":
      return `(${textOf(key)})::numeric`;
    case "boolean":
      return `(${textOf(key)})::boolean`;
    case "multiSelect":
      throw new Error(`multiSelect custom field "${key}" cannot be sorted on`);
    default:
      // Text, select, url, email; a date's and a dateTime's stored text has a fixed width, so its text order is its time order.
      return textOf(key);
  }
}

/** What a range condition compares: numbers as numeric, dates and dateTimes as instants, the rest as text. */
function rangeExpression(key: string, type: CustomFieldType): string {
  switch (type) {
    case "date":
      return `((${textOf(key)})::date::timestamp AT TIME ZONE 'UTC')`;
    case "dateTime":
      return `(${textOf(key)})::timestamptz`;
    default:
      return customSortExpression(key, type);
  }
}

/** The range parameter's cast, so PostgreSQL reads it as the expression's type. */
function rangeCast(type: CustomFieldType): string {
  switch (type) {
    case "number":
    case "integer":
      return "::numeric";
    case "date":
    case "dateTime":
      return "::timestamptz";
    default:
      return "";
  }
}

/** Decimal text (`-007.50`) as a JSON number (`-7.50`): JSON has no leading zeros. */
function jsonNumber(text: string): string {
  const match = /^(-?)0*(\d+)(\.\d+)?$/.exec(text);
  if (!match) throw new Error(`"${text}" is not decimal text`);
  return `${match[1]}${match[2]}${match[3] ?? ""}`;
}

/** Midnight UTC as its `YYYY-MM-DD`; undefined for any other instant (no date equals it). */
export function dayOf(value: Date): string | undefined {
  return value.getTime() % 86_400_000 === 0 ? value.toISOString().slice(0, 10) : undefined;
}

/** `eq`: the `{"key": value}` the record's values must contain, as JSON text; undefined when nothing can match. */
function containedJson(key: string, type: CustomFieldType, value: ConditionNode["value"]): string | undefined {
  switch (type) {
    case "number":
      return `{${JSON.stringify(key)}:${jsonNumber(String(value))}}`;
    case "date": {
      const day = value instanceof Date ? dayOf(value) : undefined;
      return day === undefined ? undefined : JSON.stringify({ [key]: day });
    }
    case "dateTime":
      return JSON.stringify({ [key]: (value as Date).toISOString() });
    case "multiSelect":
      return JSON.stringify({ [key]: [value] });
    default:
      return JSON.stringify({ [key]: value });
  }
}

/**
 * One condition on custom field `key` of `type` (the parser checked the operator and value against its spec).
 * With `sortValues`, a range reads the sort values (custom-field-range.ts); without, it casts every record's value.
 */
export function customLeaf(params: SqlParams, key: string, type: CustomFieldType, node: ConditionNode, sortValues?: SortValuesScope): string {
  switch (node.operator) {
    case "equals": {
      const json = containedJson(key, type, node.value);
      return json === undefined ? "(FALSE)" : `(${COLUMN} @> ${params.add(json)}::jsonb)`;
    }
    case "contains":
      return `(${textOf(key)} ILIKE ${params.add(`%${escapeLike(String(node.value))}%`)})`;
    case "startsWith":
      return `(${textOf(key)} ILIKE ${params.add(`${escapeLike(String(node.value))}%`)})`;
    case "endsWith":
      return `(${textOf(key)} ILIKE ${params.add(`%${escapeLike(String(node.value))}`)})`;
    default: {
      const operator = node.operator;
      const cast = () => `(${rangeExpression(key, type)} ${RANGES[operator]} ${params.add(node.value)}${rangeCast(type)})`;
      return sortValues ? sortValueRange(params, sortValues, key, type, operator, node.value, cast) : cast();
    }
  }
}

/** `NOT:` of one condition: a record without a value does not match the condition, so its negation matches it (where.compiler.ts). */
export function customNegatedLeaf(params: SqlParams, key: string, type: CustomFieldType, node: ConditionNode, sortValues?: SortValuesScope): string {
  return `((${COLUMN} -> ${keyLiteral(key)}) IS NULL OR NOT ${customLeaf(params, key, type, node, sortValues)})`;
}
