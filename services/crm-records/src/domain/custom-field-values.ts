// Custom field values (extensions §E4): what a record's `customFields` may hold, checked against the
// business's definitions of its entity, and how the stored values are shown. Pure: no I/O, no clock.
// Values are stored as JSON (a jsonb column per record table, docs/performance.md D34), normalised so
// that JSON order is the value's order: a dateTime is kept as UTC `toISOString()` text.
import { CUSTOM_FIELD_LIMITS, CUSTOM_FIELDS_PROPERTY, customFieldSelectTypes, decimalPlaces, MONEY_UPPER_BOUND, type CustomFieldType } from "@crm/contracts";
import { type ErrorDetail, errors } from "@crm/errors";
import { z } from "zod";

/** A value as stored and answered; null is "no value" and is never stored. */
export type CustomFieldValue = string | number | boolean | string[];
/** A record's stored `customFields`: archived keys' values are kept in it, and left out of every answer. */
export type StoredCustomFields = Readonly<Record<string, CustomFieldValue>>;

/** A definition, as the rules here need it (custom-field-definitions.ts has the whole one). */
export interface CustomFieldRule {
  key: string;
  type: CustomFieldType;
  required: boolean;
  unique: boolean;
  options: readonly string[] | null;
  defaultValue: CustomFieldValue | null;
  isArchived: boolean;
}

const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const ISO_DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:\d{2})$/i;
/** Longest url value. */
export const URL_MAX_LENGTH = 2048;
/** Longest email value. */
export const EMAIL_MAX_LENGTH = 320;
/** What an email value matches: the pattern z.email() checks with (record-json-schema.ts publishes it). */
export const EMAIL_PATTERN = z.regexes.email;
const EMAIL = z.email({ pattern: EMAIL_PATTERN }).max(EMAIL_MAX_LENGTH);
/**
 * A url with a space or control character is refused rather than kept: the URL parser would drop or
 * encode them silently, and the value would no longer read as the URL it names.
 */
function hasSpaceOrControl(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code <= 0x20 || code === 0x7f) return true;
  }
  return false;
}
/** How every kept url starts (the schema's pattern); the URL parser has checked the rest. */
export const URL_PATTERN = /^[hH][tT][tT][pP][sS]?:/;

/** Characters as people count them (code points), not UTF-16 units. */
function characters(text: string): number {
  let n = 0;
  for (const _ of text) n++;
  return n;
}

function isCalendarDate(text: string): boolean {
  const match = ISO_DATE.exec(text);
  if (!match) return false;
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  const date = new Date(Date.UTC(year, month - 1, day));
  return date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
}

/**
 * One non-null value against its definition: `{value}` normalised for storage, or `{problem}` saying
 * what is wrong with it.
 */
export function checkValue(rule: Pick<CustomFieldRule, "type" | "options">, value: unknown): { value: CustomFieldValue } | { problem: string } {
  switch (rule.type) {
    case "text":
    case "longText": {
      const max = rule.type === "text" ? CUSTOM_FIELD_LIMITS.textMaxLength : CUSTOM_FIELD_LIMITS.longTextMaxLength;
      if (typeof value !== "string") return { problem: "Expected a string" };
      if (characters(value) > max) return { problem: `At most ${max} characters` };
      return { value };
    }
    case "number":
      if (typeof value !== "number" || !Number.isFinite(value)) return { problem: "Expected a number" };
      if (Math.abs(value) >= MONEY_UPPER_BOUND) return { problem: `Expected a number between -${MONEY_UPPER_BOUND} and ${MONEY_UPPER_BOUND} (exclusive)` };
      if (decimalPlaces(value) > CUSTOM_FIELD_LIMITS.numberMaxDecimals) return { problem: `At most ${CUSTOM_FIELD_LIMITS.numberMaxDecimals} decimal places` };
      return { value };
    case "integer":
      if (typeof value !== "number" || !Number.isSafeInteger(value)) return { problem: "Expected an integer" };
      return { value };
    case "boolean":
      if (typeof value !== "boolean") return { problem: "Expected a boolean" };
      return { value };
    case "date":
      if (typeof value !== "string" || !isCalendarDate(value)) return { problem: "Expected a date (YYYY-MM-DD)" };
      return { value };
    case "dateTime": {
      if (typeof value !== "string" || !ISO_DATE_TIME.test(value)) return { problem: "Expected an ISO 8601 date-time with a time zone (2026-01-31T09:30:00Z)" };
      const time = Date.parse(value);
      if (Number.isNaN(time) || !isCalendarDate(value.slice(0, 10))) return { problem: "Expected an ISO 8601 date-time with a time zone (2026-01-31T09:30:00Z)" };
      const normalised = new Date(time).toISOString();
      // An offset can carry 9999-12-31 past year 9999 (or 0001 before year 1), where toISOString writes a six-digit year no ISO reader takes.
      if (!ISO_DATE_TIME.test(normalised)) return { problem: "Expected an ISO 8601 date-time with a time zone (2026-01-31T09:30:00Z)" };
      return { value: normalised };
    }
    case "email":
      if (typeof value !== "string" || !EMAIL.safeParse(value).success) return { problem: "Expected an email address" };
      return { value };
    case "url": {
      if (typeof value !== "string" || value.length > URL_MAX_LENGTH || hasSpaceOrControl(value) || !URL_PATTERN.test(value) || !URL.canParse(value)) {
        return { problem: "Expected an absolute http or https URL" };
      }
      const url = new URL(value);
      if ((url.protocol !== "http:" && url.protocol !== "https:") || url.hostname === "") return { problem: "Expected an absolute http or https URL" };
      return { value };
    }
    case "select":
      if (typeof value !== "string" || !rule.options?.includes(value)) return { problem: `Expected one of the options: ${(rule.options ?? []).join(", ")}` };
      return { value };
    case "multiSelect": {
      if (!Array.isArray(value) || value.some((option) => typeof option !== "string" || !rule.options?.includes(option))) {
        return { problem: `Expected an array of the options: ${(rule.options ?? []).join(", ")}` };
      }
      if (new Set(value).size !== value.length) return { problem: "Options must be distinct" };
      return { value: [...(value as string[])] };
    }
  }
}

export function isSelectType(type: CustomFieldType): boolean {
  return customFieldSelectTypes.includes(type);
}

function pathOf(key: string): string {
  return `${CUSTOM_FIELDS_PROPERTY}.${key}`;
}

/** What a write does to a record's stored values: keys to set (normalised) and keys to clear. */
export interface CustomFieldChange {
  set: Record<string, CustomFieldValue>;
  clear: string[];
}

/**
 * A create's or update's `customFields` (undefined when the body has none) against the entity's
 * definitions (archived ones included: their keys are refused like unknown ones). A create fills
 * each key it leaves out from `defaultValue`; a required key missing or null on create, or set to
 * null on update, is refused. Every problem at once, each at `customFields.<key>` (400001).
 */
export function customFieldChange(rules: readonly CustomFieldRule[], input: unknown, mode: "create" | "update"): CustomFieldChange {
  const change: CustomFieldChange = { set: {}, clear: [] };
  const details: ErrorDetail[] = [];
  const active = new Map(rules.filter((rule) => !rule.isArchived).map((rule) => [rule.key, rule]));
  if (input !== undefined && (typeof input !== "object" || input === null || Array.isArray(input))) {
    throw errors.validationFailed([{ path: CUSTOM_FIELDS_PROPERTY, message: "Expected an object of custom field values" }]);
  }
  const given = (input ?? {}) as Record<string, unknown>;
  for (const [key, value] of Object.entries(given)) {
    const rule = active.get(key);
    if (!rule) {
      const archived = rules.some((r) => r.key === key);
      details.push({ path: pathOf(key), message: archived ? `Custom field "${key}" is archived` : `Unknown custom field "${key}"` });
      continue;
    }
    if (value === null) {
      if (rule.required) details.push({ path: pathOf(key), message: "Required" });
      else change.clear.push(key);
      continue;
    }
    const checked = checkValue(rule, value);
    if ("problem" in checked) details.push({ path: pathOf(key), message: checked.problem });
    else change.set[key] = checked.value;
  }
  if (mode === "create") {
    for (const rule of active.values()) {
      if (Object.hasOwn(given, rule.key)) continue;
      if (rule.defaultValue !== null) change.set[rule.key] = rule.defaultValue;
      else if (rule.required) details.push({ path: pathOf(rule.key), message: "Required" });
    }
  }
  if (details.length > 0) throw errors.validationFailed(details);
  return change;
}

/** The stored values after `change`. */
export function applyCustomFieldChange(stored: StoredCustomFields, change: CustomFieldChange): Record<string, CustomFieldValue> {
  const next: Record<string, CustomFieldValue> = { ...stored };
  for (const key of change.clear) delete next[key];
  Object.assign(next, change.set);
  return next;
}

/** `customFields` as answers and events show it: one member per active definition, in definition order, value or null. */
export function customFieldsView(rules: readonly CustomFieldRule[], stored: unknown): Record<string, CustomFieldValue | null> {
  const values = (stored !== null && typeof stored === "object" ? stored : {}) as StoredCustomFields;
  const view: Record<string, CustomFieldValue | null> = {};
  for (const rule of rules) if (!rule.isArchived) view[rule.key] = Object.hasOwn(values, rule.key) ? values[rule.key]! : null;
  return view;
}

/**
 * The text a unique value is kept under (one row per business, entity, key and value): its JSON text,
 * so `"1"` and `1` never meet and a multiSelect's options compare in the order given.
 */
export function uniqueValueText(value: CustomFieldValue): string {
  return JSON.stringify(value);
}

/** What a record write stores: its `customFields` column, and the unique values it takes or gives up. */
export interface CustomFieldWrite {
  stored: Record<string, CustomFieldValue>;
  /** Unique keys whose value the write sets or clears (their held values are replaced). */
  uniqueKeys: string[];
  /** The values of those keys the record holds after the write. */
  uniqueValues: Array<{ key: string; value: string }>;
}

/**
 * A create's (every record: defaults fill it) or an update's custom values, merged by key into what
 * the record stored (`before`); undefined for an update whose body has no `customFields`.
 */
export function customFieldWrite(rules: readonly CustomFieldRule[], input: unknown, mode: "create" | "update", before: unknown = {}): CustomFieldWrite | undefined {
  if (mode === "update" && input === undefined) return undefined;
  const change = customFieldChange(rules, input, mode);
  const stored = applyCustomFieldChange((before !== null && typeof before === "object" ? before : {}) as StoredCustomFields, change);
  const unique = new Set(rules.filter((rule) => rule.unique).map((rule) => rule.key));
  const uniqueKeys = [...Object.keys(change.set), ...change.clear].filter((key) => unique.has(key));
  const uniqueValues = uniqueKeys.filter((key) => Object.hasOwn(change.set, key)).map((key) => ({ key, value: uniqueValueText(change.set[key]!) }));
  return { stored, uniqueKeys, uniqueValues };
}
