// `customFields.<key>` in webhook filters (extensions §E1.5 with §E4). This service does not own the
// definitions (crm-records does, and they change after a webhook is written: archived, brought back,
// removed and defined again with another type), so here a custom key is accepted when its name is a
// valid key (that it is an active definition of each subscribed entity is checked when the filter is
// written, from the keys the gateway looked up: webhook-filter.ts), and its value's type is taken
// from the event itself:
//   - when the filter is written, each custom key is typed by the cast written with it: int() and
//     float() make it a decimal, bool() a boolean, date() a date-time, no cast a string; so casts,
//     operators and their errors are the list grammar's (a cast after another on the same key, or
//     `contains` on a decimal, is refused as on a built-in field);
//   - when an event is matched, the value in `data.customFields` is compared in its own JSON type:
//     a number numerically, a boolean as a boolean, text as text or, against a date(), as a time;
//     a multiSelect's array matches when one of its options does (so `eq` means "contains this
//     option"); a value of another type, null, or a key the record lacks does not match.
// Pure.
import { CUSTOM_FIELD_KEY_PATTERN, CUSTOM_FIELDS_PROPERTY } from "@crm/contracts";
import { type CastName, type ConditionNode, type FieldSpec, FILTER_OPERATORS, matchesWhere } from "@crm/query-language";

const PREFIX = `${CUSTOM_FIELDS_PROPERTY}.`;
const OPERATOR = `(?:(?:${FILTER_OPERATORS.join("|")}):)?`;
/**
 * `customFields.<name>:` wherever a field can start, with the cast its value starts with. A field is
 * everything up to the first ":", so this finds every custom field a filter names; it may also find
 * one inside a value, which only adds an unused entry to the field table.
 */
const CUSTOM_LEAF = new RegExp(`${PREFIX.replace(".", "\\.")}([^:,\\[\\]"]*):${OPERATOR}(?:(int|float|bool|date)\\()?`, "g");

const TYPE_OF_CAST: Readonly<Record<CastName, FieldSpec["type"]>> = { int: "decimal", float: "decimal", bool: "boolean", date: "datetime" };

/** Whether a `where` field name addresses a custom value. */
export function isCustomFieldName(field: string): boolean {
  return field.startsWith(PREFIX);
}

/**
 * The field table entries for the custom keys `filter` names with a valid key: typed by the first
 * cast written with each (a string when none). An invalid key gets no entry, so the parser answers
 * it as an unknown field.
 */
export function customFieldSpecs(filter: string): Record<string, FieldSpec> {
  const specs: Record<string, FieldSpec> = {};
  for (const match of filter.matchAll(CUSTOM_LEAF)) {
    const key = match[1]!;
    if (!CUSTOM_FIELD_KEY_PATTERN.test(key)) continue;
    const name = `${PREFIX}${key}`;
    const cast = match[2] as CastName | undefined;
    const current = specs[name];
    if (current === undefined || (current.type === "string" && cast)) specs[name] = { type: cast ? TYPE_OF_CAST[cast] : "string", nullable: true };
  }
  return specs;
}

/**
 * How `node` compares with one stored value: a cast's type (`declared`) takes only values of that
 * type; a plain value is read in the stored value's type (`true`/`false` for a boolean, a number's
 * text for a number). Undefined when the two cannot compare (no match).
 */
function comparison(node: ConditionNode, value: unknown, declared: FieldSpec["type"]): { condition: ConditionNode; spec: FieldSpec } | undefined {
  const as = (type: FieldSpec["type"], condition = node) => ({ condition, spec: { type, nullable: true } });
  switch (declared) {
    case "decimal":
      return typeof value === "number" ? as("decimal") : undefined;
    case "boolean":
      return typeof value === "boolean" ? as("boolean") : undefined;
    case "datetime":
      return typeof value === "string" ? as("datetime") : undefined;
    default:
      if (typeof value === "string") return as("string");
      if (typeof value === "number") return as("decimal");
      if (typeof value === "boolean" && (node.value === "true" || node.value === "false")) return as("boolean", { ...node, value: node.value === "true" });
      return undefined;
  }
}

function matchesValue(node: ConditionNode, value: unknown, declared: FieldSpec["type"]): boolean {
  const read = comparison(node, value, declared);
  return read !== undefined && matchesWhere(read.condition, { [node.field]: value }, { fields: { [node.field]: read.spec }, relations: {} });
}

/**
 * Whether the record's custom value matches a `customFields.<key>` condition; `declared` is the
 * key's entry in the filter's field table (customFieldSpecs).
 */
export function matchesCustomCondition(node: ConditionNode, data: Readonly<Record<string, unknown>>, declared: FieldSpec | undefined): boolean {
  const values = data[CUSTOM_FIELDS_PROPERTY];
  if (values === null || typeof values !== "object" || Array.isArray(values)) return false;
  const key = node.field.slice(PREFIX.length);
  const value = Object.hasOwn(values, key) ? (values as Record<string, unknown>)[key] : undefined;
  const type = declared?.type ?? "string";
  if (Array.isArray(value)) return value.some((option) => matchesValue(node, option, type));
  return matchesValue(node, value, type);
}
