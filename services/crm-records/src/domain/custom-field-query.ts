// Custom fields in a list's `where` and `orderBy` (extensions §E4): each active definition of the
// entity becomes the field `customFields.<key>` of the query language, typed by its definition, so
// the parser gives it the same operators, casts and errors as a built-in field (an archived or
// unknown key is an unknown field: 400019 in where, 400011 in orderBy). Pure: no I/O.
import { CUSTOM_FIELDS_PROPERTY, type CustomFieldType } from "@crm/contracts";
import type { FieldSpec, OrderTerm, QuerySpec, WhereNode } from "@crm/query-language";
import type { CustomFieldRule } from "./custom-field-values";

const PREFIX = `${CUSTOM_FIELDS_PROPERTY}.`;

/** The active custom fields a list may name, by key. */
export type CustomFieldTypes = ReadonlyMap<string, CustomFieldType>;

/** The key of a query field naming a custom field (`customFields.<key>`), else undefined. */
export function customFieldKey(field: string): string | undefined {
  return field.startsWith(PREFIX) ? field.slice(PREFIX.length) : undefined;
}

/**
 * How the query language reads a custom field of `type`. A number is an exact decimal, an integer an
 * int, a date (midnight UTC, decisions §3) and a dateTime compare as instants; select values are an
 * enum of the options; a multiSelect is one too, for `eq` ("holds this option"), and cannot be sorted.
 */
export function customFieldSpec(rule: Pick<CustomFieldRule, "type" | "options">): FieldSpec {
  switch (rule.type) {
    case "text":
    case "longText":
    case "email":
    case "url":
      return { type: "string", nullable: true };
    case "number":
      return { type: "decimal", nullable: true };
    case "integer":
      return { type: "int", nullable: true, wideInteger: true };
    case "boolean":
      return { type: "boolean", nullable: true };
    case "date":
    case "dateTime":
      return { type: "datetime", nullable: true };
    case "select":
      return { type: "enum", nullable: true, enumValues: rule.options ?? [] };
    case "multiSelect":
      return { type: "enum", nullable: true, enumValues: rule.options ?? [], sortable: false };
  }
}

const specs = new WeakMap<QuerySpec, WeakMap<readonly CustomFieldRule[], QuerySpec>>();

/** The entity's query spec with its business's active custom fields added (one object per definitions version). */
export function withCustomFields(spec: QuerySpec, rules: readonly CustomFieldRule[]): QuerySpec {
  let byRules = specs.get(spec);
  if (!byRules) {
    byRules = new WeakMap();
    specs.set(spec, byRules);
  }
  let found = byRules.get(rules);
  if (!found) {
    const fields = { ...spec.fields };
    for (const rule of rules) if (!rule.isArchived) fields[`${PREFIX}${rule.key}`] = customFieldSpec(rule);
    found = { ...spec, fields };
    byRules.set(rules, found);
  }
  return found;
}

/** The active custom fields' types, by key. */
export function customFieldTypes(rules: readonly CustomFieldRule[]): CustomFieldTypes {
  return new Map(rules.filter((rule) => !rule.isArchived).map((rule) => [rule.key, rule.type]));
}

/** Whether a parsed list query names a custom field (in its filter or its order). */
export function namesCustomField(where: WhereNode | undefined, orderBy: readonly OrderTerm[]): boolean {
  const inWhere = (node: WhereNode): boolean => {
    switch (node.kind) {
      case "condition":
        return customFieldKey(node.field) !== undefined;
      case "and":
      case "or":
        return node.conditions.some(inWhere);
      case "not":
        return inWhere(node.condition);
    }
  };
  return orderBy.some((term) => customFieldKey(term.field) !== undefined) || (where !== undefined && inWhere(where));
}

/** The value of query field `field` on a row as read from the table (a custom field's from its `customFields`). */
export function sortValueOf(row: Readonly<Record<string, unknown>>, field: string): unknown {
  const key = customFieldKey(field);
  if (key === undefined) return row[field];
  const stored = row[CUSTOM_FIELDS_PROPERTY];
  return stored !== null && typeof stored === "object" && Object.hasOwn(stored, key) ? (stored as Record<string, unknown>)[key] : null;
}

/**
 * Whether a cursor's key value can stand for a custom field of `type` in its keyset: the JSON type
 * its values have. A cursor made before the key was removed for good and defined again with another
 * type holds the old type, and comparing it would be a database error rather than a 400.
 */
export function isCustomSortValue(type: CustomFieldType, value: unknown): boolean {
  if (value === null) return true;
  switch (type) {
    case "number":
    case "integer":
      return typeof value === "number" && Number.isFinite(value);
    case "boolean":
      return typeof value === "boolean";
    case "multiSelect":
      return false;
    default:
      return typeof value === "string" && !value.includes("\u0000");
  }
}
