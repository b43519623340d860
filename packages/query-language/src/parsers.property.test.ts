// Robustness properties: whatever a client sends, the parsers either succeed or throw exactly
// the query language's own AppError (400019, 400011 or 400001), never a TypeError, RangeError
// (stack overflow) or anything else that would surface as a 500.
import fc from "fast-check";
import { parseInclude } from "./include.parser";
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

function expectOnly(codes: readonly number[], fn: () => unknown): void {
  const error = thrownBy(fn);
  if (error !== undefined && !isQueryError(error, codes)) throw error;
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
    const query = fc.record(
      { page: value, perPage: value, where: value, orderBy: value, include: value },
      { requiredKeys: [] },
    );
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
