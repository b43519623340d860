/**
 * PostgreSQL array literals (`{a,b,NULL}`) built here for the statements that every attempt feeds
 * (recordAttempts' twelve columns), passed as one text parameter each and cast by the statement
 * (`::uuid[]`, `::timestamptz[]`, ...). Both drivers pass a string through as it is: node-postgres
 * otherwise prepares each element itself (prepareValue, two regular-expression replacements per
 * element, local-time formatting of every Date), PGlite its own array serializer. That was ~2% of
 * webhook-delivery's busy profile samples (docs/performance.md). The text is what node-postgres'
 * arrayString would have sent, except dates in UTC (toISOString) rather than local time with an offset:
 * the same instants to a timestamptz.
 */

/** Elements that need no quoting in an array literal: numbers, booleans, uuids, enum labels. */
export function plainArray(values: ReadonlyArray<string | number | boolean | null>): string {
  let text = "{";
  for (let i = 0; i < values.length; i++) {
    if (i > 0) text += ",";
    const value = values[i];
    text += value === null ? "NULL" : String(value);
  }
  return text + "}";
}

/** Instants, in UTC: no character of an ISO 8601 date needs quoting. */
export function dateArray(values: ReadonlyArray<Date | null>): string {
  let text = "{";
  let last: Date | undefined;
  let lastText = "";
  for (let i = 0; i < values.length; i++) {
    if (i > 0) text += ",";
    const value = values[i]!;
    if (value === null) {
      text += "NULL";
      continue;
    }
    // A batch's rows often share one Date object (a claim's lease end): formatted once.
    if (value !== last) {
      last = value;
      lastText = value.toISOString();
    }
    text += lastText;
  }
  return text + "}";
}

const BACKSLASH = /\\/g;
const QUOTE = /"/g;

/**
 * Any text, each element quoted; backslashes and double quotes escaped by a backslash. Two replacements
 * of one character each, as node-postgres does: V8 runs those as plain searches, where one pattern
 * `[\\"]` with `$&` runs the regular expression engine (twice as slow on a JSON text; D18).
 */
export function textArray(values: ReadonlyArray<string | null>): string {
  let text = "{";
  for (let i = 0; i < values.length; i++) {
    if (i > 0) text += ",";
    const value = values[i]!;
    text += value === null ? "NULL" : `"${value.replace(BACKSLASH, "\\\\").replace(QUOTE, '\\"')}"`;
  }
  return text + "}";
}
