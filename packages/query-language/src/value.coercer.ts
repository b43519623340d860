// Turns the raw text of a `where` value into a value of the field's type, and decides which
// operator may be used on which field type. Everything here rejects with 400019.
import { CASTS, type CastName } from "./limits.constants";
import { invalidWhere, quoted } from "./query.errors";
import type { FieldSpec, FilterValue, Operator } from "./query.types";

/** A value as written: `quoted` values are never casts (quoting is how a client writes a literal `int(5)`). */
export interface RawValue {
  text: string;
  quoted: boolean;
}

const STRING_OPERATORS: ReadonlySet<Operator> = new Set(["contains", "startsWith", "endsWith"]);
const RANGE_OPERATORS: ReadonlySet<Operator> = new Set(["gt", "gte", "lt", "lte"]);

// Prisma `Int` is a 32-bit PostgreSQL integer: a larger literal would fail in the database (a 500),
// so it is refused here as a bad query instead.
const INT32_MIN = -2147483648;
const INT32_MAX = 2147483647;

const INTEGER_TEXT = /^[+-]?\d+$/;
// Plain decimal notation only: exponents (`1e999999`) could overflow PostgreSQL `numeric`.
const DECIMAL_TEXT = /^[+-]?\d+(?:\.\d+)?$/;
const CAST_SHAPE = /^([A-Za-z_][A-Za-z0-9_]*)\(([\s\S]*)\)$/;
const DATE_ONLY = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|[+-]\d{2}:?\d{2})?$/;
// The canonical 8-4-4-4-12 hex spelling, any version and variant (PostgreSQL `uuid` accepts all of
// them), either case. Anything else would make PostgreSQL reject the query (a 500), so it is 400019.
const UUID_TEXT = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function coerceValue(field: string, spec: FieldSpec, operator: Operator, raw: RawValue): FilterValue {
  checkOperator(field, spec, operator);
  // PostgreSQL text cannot hold NUL; letting one through would surface as a database error (500).
  if (raw.text.includes("\u0000")) throw invalidWhere(`value for "${field}" contains a NUL character`);
  const cast = raw.quoted ? undefined : matchCast(raw.text);
  return cast ? applyCast(field, spec, cast.name, cast.inner) : readPlain(field, spec, raw.text);
}

function checkOperator(field: string, spec: FieldSpec, operator: Operator): void {
  // Ids compare by identity only: ordering or matching parts of a uuid means nothing to a client.
  if (spec.type === "uuid" && operator !== "equals") {
    throw invalidWhere(`operator "${operator}" does not apply to uuid field "${field}"`);
  }
  if (STRING_OPERATORS.has(operator) && spec.type !== "string") {
    throw invalidWhere(`operator "${operator}" applies to string fields only, "${field}" is ${spec.type}`);
  }
  if (RANGE_OPERATORS.has(operator) && (spec.type === "boolean" || spec.type === "enum")) {
    throw invalidWhere(`operator "${operator}" does not apply to ${spec.type} field "${field}"`);
  }
}

/** `name(...)` with one of the four cast names; any other name makes the whole value a plain string. */
function matchCast(text: string): { name: CastName; inner: string } | undefined {
  const match = CAST_SHAPE.exec(text);
  if (!match) return undefined;
  const name = match[1] as string;
  if (!(CASTS as readonly string[]).includes(name)) return undefined;
  return { name: name as CastName, inner: match[2] as string };
}

function applyCast(field: string, spec: FieldSpec, cast: CastName, inner: string): FilterValue {
  const incompatible = () => invalidWhere(`${cast}() cannot be compared with ${spec.type} field "${field}"`);
  // No cast produces a uuid; refused before the cast's own argument is even looked at.
  if (spec.type === "uuid") throw incompatible();
  switch (cast) {
    case "int":
      if (!INTEGER_TEXT.test(inner)) throw invalidWhere(`${quoted(`int(${inner})`)} is not an integer (field "${field}")`);
      if (spec.type === "int") return toInteger(field, spec, inner);
      // An integer is an exact decimal; the text keeps its precision.
      if (spec.type === "decimal") return normaliseSign(inner);
      throw incompatible();
    case "float":
      if (!DECIMAL_TEXT.test(inner)) throw invalidWhere(`${quoted(`float(${inner})`)} is not a decimal number (field "${field}")`);
      if (spec.type === "decimal") return normaliseSign(inner);
      throw incompatible();
    case "bool":
      if (inner !== "true" && inner !== "false") throw invalidWhere(`${quoted(`bool(${inner})`)} is neither true nor false (field "${field}")`);
      if (spec.type === "boolean") return inner === "true";
      throw incompatible();
    case "date": {
      const date = parseDate(inner);
      if (!date) throw invalidWhere(`${quoted(`date(${inner})`)} is not an ISO 8601 date or date-time (field "${field}")`);
      if (spec.type === "datetime") return date;
      throw incompatible();
    }
  }
}

/** An unwrapped (or quoted) value: a string, accepted on other fields only when it reads unambiguously as their type. */
function readPlain(field: string, spec: FieldSpec, text: string): FilterValue {
  const unreadable = () => invalidWhere(`${quoted(text)} is not a valid ${spec.type} for field "${field}"${enumNote(spec)}`);
  switch (spec.type) {
    case "string":
      return text;
    case "enum":
      if (!(spec.enumValues ?? []).includes(text)) throw unreadable();
      return text;
    case "int":
      if (!INTEGER_TEXT.test(text)) throw unreadable();
      return toInteger(field, spec, text);
    case "decimal":
      if (!DECIMAL_TEXT.test(text)) throw unreadable();
      return normaliseSign(text);
    case "boolean":
      if (text === "true") return true;
      if (text === "false") return false;
      throw unreadable();
    case "datetime": {
      const date = parseDate(text);
      if (!date) throw unreadable();
      return date;
    }
    case "uuid":
      if (!UUID_TEXT.test(text)) throw unreadable();
      // PostgreSQL compares uuids by value; lower case is the form it (and the API) writes them in.
      return text.toLowerCase();
  }
}

/** The values an enum field takes, for a message about one it does not. */
function enumNote(spec: FieldSpec): string {
  return spec.type === "enum" ? ` (one of ${(spec.enumValues ?? []).join(", ")})` : "";
}

function toInteger(field: string, spec: FieldSpec, text: string): number {
  const value = Number(text);
  const [min, max] = spec.wideInteger ? [Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER] : [INT32_MIN, INT32_MAX];
  if (!Number.isInteger(value) || value < min || value > max) {
    throw invalidWhere(`${quoted(text)} is out of range for integer field "${field}"`);
  }
  // `Number("-0")` is -0; the database has no such thing and Jest's equality tells them apart.
  return value === 0 ? 0 : value;
}

/** Decimal text goes to Prisma as a string; a leading `+` is dropped so every decimal parser accepts it. */
function normaliseSign(text: string): string {
  return text.startsWith("+") ? text.slice(1) : text;
}

/**
 * `YYYY-MM-DD` is midnight UTC of that day. A date-time is `YYYY-MM-DDTHH:MM[:SS[.fraction]]`
 * with an optional `Z` or `±HH:MM` offset; without one it is read as UTC, like every timestamp
 * the API returns. Impossible calendar values (`2024-02-30`, `25:00`) are refused, never rolled
 * over the way `Date.UTC` would. Fractions beyond milliseconds are truncated (JS `Date` precision).
 */
export function parseDate(text: string): Date | undefined {
  const dateOnly = DATE_ONLY.exec(text);
  if (dateOnly) return buildDate(dateOnly[1], dateOnly[2], dateOnly[3], "0", "0", "0", "", "Z");
  const dateTime = DATE_TIME.exec(text);
  if (dateTime) {
    return buildDate(dateTime[1], dateTime[2], dateTime[3], dateTime[4], dateTime[5], dateTime[6] ?? "0", dateTime[7] ?? "", dateTime[8] ?? "Z");
  }
  return undefined;
}

function buildDate(
  yearText: string | undefined,
  monthText: string | undefined,
  dayText: string | undefined,
  hourText: string | undefined,
  minuteText: string | undefined,
  secondText: string,
  fraction: string,
  offset: string,
): Date | undefined {
  const year = Number(yearText);
  const month = Number(monthText);
  const day = Number(dayText);
  const hour = Number(hourText);
  const minute = Number(minuteText);
  const second = Number(secondText);
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return undefined;
  if (hour > 23 || minute > 59 || second > 59) return undefined;
  let offsetMinutes = 0;
  if (offset !== "Z") {
    const digits = offset.slice(1).replace(":", "");
    const offsetHours = Number(digits.slice(0, 2));
    const offsetMins = Number(digits.slice(2));
    if (offsetHours > 23 || offsetMins > 59) return undefined;
    offsetMinutes = (offset.startsWith("-") ? -1 : 1) * (offsetHours * 60 + offsetMins);
  }
  const millis = Number(fraction.slice(0, 3).padEnd(3, "0"));
  const date = new Date(0);
  // setUTCFullYear, unlike Date.UTC, does not map years 0-99 to 1900-1999.
  date.setUTCFullYear(year, month - 1, day);
  date.setUTCHours(hour, minute, second, millis);
  return new Date(date.getTime() - offsetMinutes * 60_000);
}

function daysInMonth(year: number, month: number): number {
  if (month === 2) return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}
