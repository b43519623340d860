// Robustness properties: whatever a client sends, the parsers either succeed or throw exactly
// the query language's own AppError (400019, 400011 or 400001), never a TypeError, RangeError
// (stack overflow) or anything else that would surface as a 500.
import type { AppError } from "@crm/errors";
import fc from "fast-check";
import { parseInclude } from "./include.parser";
import { CASTS, FILTER_OPERATORS } from "./limits.constants";
import { parseListQuery } from "./list-query.parser";
import { parseOrderBy } from "./order-by.parser";
import { isQueryError, testSpec, thrownBy } from "./query-spec.fixture";
import { toPrismaWhere } from "./where.compiler";
import { parseWhere } from "./where.parser";

const RUNS = { numRuns: 2000 };

const fieldNames = Object.keys(testSpec.fields);
const relationNames = Object.keys(testSpec.relations);

/** Any text: printable ASCII, any code point, and ASCII control characters. */
const anyString = fc.oneof(fc.string(), fc.string({ unit: "binary" }), fc.string({ unit: "binary-ascii" }), fc.string({ unit: "grapheme" }));

/** Strings built from the grammar's own alphabet, where parser bugs hide. */
const grammarToken = fc.constantFrom(
  ":",
  ",",
  "[",
  "]",
  '"',
  "(",
  ")",
  "\\",
  "-",
  " ",
  "\u0000",
  "OR:[",
  "NOT:",
  "OR",
  "NOT",
  "gt",
  "gte",
  "lt",
  "lte",
  "contains",
  "startsWith",
  "endsWith",
  "int(",
  "float(",
  "bool(",
  "date(",
  "true",
  "false",
  "1",
  "-2",
  "1.5",
  "99999999999",
  "2024-01-01",
  "2024-01-01T10:00:00Z",
  "PAID",
  "0193a4b2-7c5d-7e8f-9a0b-1c2d3e4f5a6b",
  "0193A4B2-7C5D-7E8F-9A0B-1C2D3E4F5A6B",
  "0193a4b2-",
  "-1c2d3e4f5a6b",
  "asc",
  "desc",
  "a",
  "constructor",
  "__proto__",
  ...fieldNames,
  ...relationNames,
);
const grammarString = fc.array(grammarToken, { maxLength: 40 }).map((tokens) => tokens.join(""));
const input = fc.oneof(anyString, grammarString);

const uuidFields = Object.keys(testSpec.fields).filter((name) => testSpec.fields[name]!.type === "uuid");
const UUID_SHAPE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** A well-formed uuid of any version or variant nibble, in any mix of upper and lower case. */
const mixedCaseUuid = fc.mixedCase(fc.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/));
/** Text near the uuid shape: a uuid with one character changed, dropped or added, or anything at all. */
const nearUuid = fc.oneof(
  fc.tuple(mixedCaseUuid, fc.nat(35), fc.constantFrom("", "g", "-", " ", "0", "{", "Z")).map(([u, i, ch]) => u.slice(0, i) + ch + u.slice(i + 1)),
  fc.tuple(mixedCaseUuid, fc.constantFrom("", "0", " ", "}", "-")).map(([u, extra]) => u + extra),
  mixedCaseUuid.map((u) => u.replace(/-/g, "")),
  anyString,
);

/** The parameter a query error's detail names, by code (400001 names page or perPage). */
const DETAIL_PATHS: Record<number, readonly string[]> = { 400001: ["page", "perPage"], 400011: ["orderBy"], 400019: ["where", "include"] };

function expectOnly(codes: readonly number[], fn: () => unknown): void {
  const error = thrownBy(fn);
  if (error === undefined) return;
  if (!isQueryError(error, codes)) throw error;
  // Every refusal says where: at least one detail, on a parameter its code is about, with a message.
  const { code, details } = error as AppError;
  expect(details?.length).toBeGreaterThan(0);
  for (const detail of details ?? []) {
    expect(DETAIL_PATHS[code]).toContain(detail.path);
    expect(detail.message.length).toBeGreaterThan(0);
  }
}

describe("parsers never throw anything but their own errors", () => {
  it("where: parses or throws 400019; a parsed filter always compiles", () => {
    fc.assert(
      fc.property(input, (text) => {
        expectOnly([400019], () => toPrismaWhere(parseWhere(text, testSpec), testSpec));
      }),
      RUNS,
    );
  });

  it("where: deep and wide grammar strings (up to and past the length limit)", () => {
    const long = fc.array(grammarToken, { minLength: 100, maxLength: 800 }).map((tokens) => tokens.join(""));
    fc.assert(
      fc.property(long, (text) => {
        expectOnly([400019], () => parseWhere(text, testSpec));
      }),
      { numRuns: 300 },
    );
  });

  it("uuid fields: a well-formed uuid in any case is equality with its lower-case text", () => {
    fc.assert(
      fc.property(fc.constantFrom(...uuidFields), mixedCaseUuid, fc.boolean(), (field, uuid, quoted) => {
        const value = quoted ? `"${uuid}"` : uuid;
        expect(parseWhere(`${field}:${value}`, testSpec)).toEqual({ kind: "condition", field, operator: "equals", value: uuid.toLowerCase() });
        expect(toPrismaWhere(parseWhere(`${field}:${value}`, testSpec), testSpec)).toEqual({ [field]: { equals: uuid.toLowerCase() } });
      }),
      RUNS,
    );
  });

  it("uuid fields: anything else, any operator and any cast is 400019", () => {
    const operator = fc.constantFrom("", ...FILTER_OPERATORS.map((op) => `${op}:`));
    const cast = fc.constantFrom("", ...CASTS);
    fc.assert(
      fc.property(fc.constantFrom(...uuidFields), operator, cast, fc.oneof(mixedCaseUuid, nearUuid), (field, op, castName, text) => {
        const value = castName === "" ? text : `${castName}(${text})`;
        const error = thrownBy(() => parseWhere(`${field}:${op}${value}`, testSpec));
        if (op === "" && castName === "" && UUID_SHAPE.test(text)) {
          expect(error).toBeUndefined();
        } else {
          // Only an exact uuid survives; everything else, whatever it looks like, is a bad query.
          if (!isQueryError(error, [400019])) throw error ?? new Error(`accepted ${field}:${op}${value}`);
        }
      }),
      RUNS,
    );
  });

  it("uuid fields: NOT on a nullable uuid includes NULL, on a non-nullable one it does not", () => {
    fc.assert(
      fc.property(fc.constantFrom(...uuidFields), mixedCaseUuid, (field, uuid) => {
        const negation = { NOT: { [field]: { equals: uuid.toLowerCase() } } };
        const expected = testSpec.fields[field]!.nullable ? { OR: [{ [field]: null }, negation] } : negation;
        expect(toPrismaWhere(parseWhere(`NOT:${field}:${uuid}`, testSpec), testSpec)).toEqual(expected);
      }),
      RUNS,
    );
  });

  it("orderBy: parses (ending with the id tie-breaker) or throws 400011", () => {
    fc.assert(
      fc.property(input, (text) => {
        expectOnly([400011], () => {
          const terms = parseOrderBy(text, testSpec);
          expect(terms.some((term) => term.field === "id")).toBe(true);
        });
      }),
      RUNS,
    );
  });

  it("include: parses into known, distinct relations or throws 400019", () => {
    fc.assert(
      fc.property(input, (text) => {
        expectOnly([400019], () => {
          const relations = parseInclude(text, testSpec);
          expect(new Set(relations).size).toBe(relations.length);
          for (const name of relations) expect(relationNames).toContain(name);
        });
      }),
      RUNS,
    );
  });

  it("parseListQuery: any req.query shape parses or throws 400001/400011/400019", () => {
    const value = fc.oneof(fc.constant(undefined), input, fc.array(input, { maxLength: 3 }), fc.dictionary(fc.string(), fc.string()), fc.integer(), fc.double());
    const query = fc.record({ page: value, perPage: value, where: value, orderBy: value, include: value }, { requiredKeys: [] });
    fc.assert(
      fc.property(query, (q) => {
        expectOnly([400001, 400011, 400019], () => {
          const parsed = parseListQuery(q as Record<string, unknown>, testSpec);
          expect(parsed.perPage).toBeGreaterThanOrEqual(1);
          expect(parsed.perPage).toBeLessThanOrEqual(100);
          expect(parsed.skip).toBe((parsed.page - 1) * parsed.perPage);
        });
      }),
      RUNS,
    );
  });
});
