// Meaning-level properties of `where`:
//  1. Round trip: any AST within the limits, written out in the grammar, parses back to itself.
//  2. NOT semantics: the compiled Prisma filter, evaluated with SQL's three-valued logic (as
//     PostgreSQL would), selects exactly the rows a plain two-valued reading of the AST selects.
//     In particular `NOT:cond` matches exactly the rows `cond` does not, NULLs included.
import fc from "fast-check";
import { FILTER_OPERATORS, MAX_WHERE_CONDITIONS, MAX_WHERE_DEPTH, MAX_WHERE_LENGTH } from "./limits.constants";
import { INVOICE_STATUSES, testSpec } from "./query-spec.fixture";
import type { ConditionNode, FieldSpec, FilterValue, Operator, WhereNode } from "./query.types";
import { toPrismaWhere } from "./where.compiler";
import { matchesWhere } from "./where.evaluator";
import { parseWhere } from "./where.parser";

// ---------------------------------------------------------------------------------------------
// Writing an AST in the grammar

const CAST_LIKE = /^(int|float|bool|date)\(.*\)$/s;

function quote(text: string): string {
  return `"${text.replace(/[\\"]/g, (ch) => `\\${ch}`)}"`;
}

/** Unquoted when the grammar allows it, so both spellings are exercised. */
function writeString(text: string, preferBare: boolean): string {
  const bareIsSafe = text !== "" && !/[,[\]]/.test(text) && !text.startsWith('"') && !CAST_LIKE.test(text) && !FILTER_OPERATORS.some((op) => text.startsWith(`${op}:`));
  return preferBare && bareIsSafe ? text : quote(text);
}

function writeValue(spec: FieldSpec, value: FilterValue, useCast: boolean): string {
  switch (spec.type) {
    case "string":
      return writeString(value as string, !useCast);
    case "enum":
      return value as string;
    case "int":
      return useCast ? `int(${value as number})` : String(value);
    case "decimal":
      return useCast ? `float(${value as string})` : (value as string);
    case "boolean":
      return useCast ? `bool(${String(value)})` : String(value);
    case "datetime":
      return useCast ? `date(${(value as Date).toISOString()})` : (value as Date).toISOString();
    case "uuid":
      // No cast applies to a uuid; the flag picks the other spelling: quoted and upper-case.
      return useCast ? quote((value as string).toUpperCase()) : (value as string);
  }
}

type Written = { node: WhereNode; text: string };

// ---------------------------------------------------------------------------------------------
// Generating ASTs

const OPERATORS_BY_TYPE: Record<FieldSpec["type"], readonly Operator[]> = {
  string: ["equals", ...FILTER_OPERATORS],
  int: ["equals", "gt", "gte", "lt", "lte"],
  decimal: ["equals", "gt", "gte", "lt", "lte"],
  datetime: ["equals", "gt", "gte", "lt", "lte"],
  boolean: ["equals"],
  enum: ["equals"],
  uuid: ["equals"],
};

/** Small domains so that generated filters and rows actually meet. */
const STRINGS = ["a", "A", "ab", "Ab", "a%", "a_b", "axb", "%", "_", "\\", "b", ""] as const;
const INTS = [-1, 0, 1, 2] as const;
const DECIMALS = ["-1", "0", "0.5", "1"] as const;
const DATES = [new Date("2024-01-01T00:00:00Z"), new Date("2024-06-01T12:30:00Z"), new Date("2025-01-01T00:00:00Z")] as const;
const PRIORITIES = ["LOW", "HIGH"] as const;
const UUIDS = [
  "00000000-0000-0000-0000-000000000000",
  "0193a4b2-7c5d-7e8f-9a0b-1c2d3e4f5a6b",
  "f47ac10b-58cc-4372-a567-0e02b2c3d479",
  "ffffffff-ffff-ffff-ffff-ffffffffffff",
] as const;
/** Any well-formed uuid (any version or variant nibble), as the parser normalises it: lower case. */
const anyUuid = fc.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);

function valueArb(spec: FieldSpec): fc.Arbitrary<FilterValue> {
  switch (spec.type) {
    case "string":
      return fc.oneof(
        fc.constantFrom(...STRINGS),
        fc.string({ unit: "binary", maxLength: 8 }).filter((s) => !s.includes("\u0000")),
      );
    case "int":
      return fc.oneof(fc.constantFrom(...INTS), fc.integer({ min: -2147483648, max: 2147483647 }));
    case "decimal":
      return fc.constantFrom(...DECIMALS);
    case "boolean":
      return fc.boolean();
    case "datetime":
      return fc.constantFrom(...DATES);
    case "enum":
      return fc.constantFrom(...(spec.enumValues ?? []));
    case "uuid":
      return fc.oneof(fc.constantFrom(...UUIDS), anyUuid);
  }
}

const semanticFields = ["id", "clientId", "firstName", "email", "quantity", "score", "discount", "isActive", "isVip", "status", "priority", "dueDate"] as const;

const leafArb: fc.Arbitrary<Written> = fc
  .constantFrom(...semanticFields)
  .chain((field) => {
    const spec = testSpec.fields[field]!;
    return fc.tuple(fc.constant(field), fc.constantFrom(...OPERATORS_BY_TYPE[spec.type]), valueArb(spec), fc.boolean());
  })
  .map(([field, operator, value, useCast]) => {
    const spec = testSpec.fields[field]!;
    const node: ConditionNode = { kind: "condition", field, operator, value };
    const op = operator === "equals" ? "" : `${operator}:`;
    return { node, text: `${field}:${op}${writeValue(spec, value, useCast)}` };
  });

function nodeArb(levelsLeft: number): fc.Arbitrary<Written> {
  if (levelsLeft === 0) return leafArb;
  const inner = nodeArb(levelsLeft - 1);
  return fc.oneof(
    { arbitrary: leafArb, weight: 3 },
    {
      arbitrary: fc.array(inner, { minLength: 1, maxLength: 3 }).map((items) => ({
        node: { kind: "or", conditions: items.map((i) => i.node) } as WhereNode,
        text: `OR:[${items.map((i) => i.text).join(",")}]`,
      })),
      weight: 1,
    },
    { arbitrary: inner.map((i) => ({ node: { kind: "not", condition: i.node } as WhereNode, text: `NOT:${i.text}` })), weight: 1 },
  );
}

function countLeaves(node: WhereNode): number {
  switch (node.kind) {
    case "condition":
      return 1;
    case "not":
      return countLeaves(node.condition);
    default:
      return node.conditions.reduce((sum, child) => sum + countLeaves(child), 0);
  }
}

const whereArb: fc.Arbitrary<Written> = fc
  .array(nodeArb(MAX_WHERE_DEPTH), { minLength: 1, maxLength: 4 })
  .map((items) => (items.length === 1 ? items[0]! : { node: { kind: "and", conditions: items.map((i) => i.node) } as WhereNode, text: items.map((i) => i.text).join(",") }))
  .filter((w) => countLeaves(w.node) <= MAX_WHERE_CONDITIONS && Array.from(w.text).length <= MAX_WHERE_LENGTH);

// ---------------------------------------------------------------------------------------------
// Evaluators

type Row = Record<string, string | number | boolean | Date | null>;
type Tri = boolean | null; // null = SQL UNKNOWN

const rowArb: fc.Arbitrary<Row> = fc.record(
  Object.fromEntries(
    semanticFields.map((field) => {
      const spec = testSpec.fields[field]!;
      let base: fc.Arbitrary<Row[string]>;
      if (spec.type === "string") base = fc.constantFrom(...STRINGS, "AB", "xa%y", "A_B");
      else if (spec.type === "int") base = fc.constantFrom(...INTS);
      else if (spec.type === "decimal") base = fc.constantFrom(-1, 0, 0.25, 0.5, 1, 2);
      else if (spec.type === "boolean") base = fc.boolean();
      else if (spec.type === "datetime") base = fc.constantFrom(...DATES);
      else if (spec.type === "uuid") base = fc.constantFrom(...UUIDS);
      else base = fc.constantFrom(...(field === "status" ? INVOICE_STATUSES : PRIORITIES));
      return [field, spec.nullable ? fc.option(base, { nil: null }) : base];
    }),
  ),
);

function compare(cell: NonNullable<Row[string]>, value: FilterValue): number {
  const a = cell instanceof Date ? cell.getTime() : typeof cell === "number" ? cell : cell;
  const b = value instanceof Date ? value.getTime() : typeof cell === "number" ? Number(value) : value;
  if (a === b) return 0;
  return a < b ? -1 : 1;
}

/** The contract: two-valued, a comparison with NULL does not match, NOT is the complement. */
function reference(node: WhereNode, row: Row): boolean {
  switch (node.kind) {
    case "and":
      return node.conditions.every((c) => reference(c, row));
    case "or":
      return node.conditions.some((c) => reference(c, row));
    case "not":
      return !reference(node.condition, row);
    case "condition": {
      const cell = row[node.field];
      if (cell === null || cell === undefined) return false;
      const v = node.value;
      switch (node.operator) {
        case "equals":
          return compare(cell, v) === 0;
        case "gt":
          return compare(cell, v) > 0;
        case "gte":
          return compare(cell, v) >= 0;
        case "lt":
          return compare(cell, v) < 0;
        case "lte":
          return compare(cell, v) <= 0;
        case "contains":
          return String(cell).toLowerCase().includes(String(v).toLowerCase());
        case "startsWith":
          return String(cell).toLowerCase().startsWith(String(v).toLowerCase());
        case "endsWith":
          return String(cell).toLowerCase().endsWith(String(v).toLowerCase());
      }
    }
  }
}

const and3 = (xs: Tri[]): Tri => (xs.includes(false) ? false : xs.includes(null) ? null : true);
const or3 = (xs: Tri[]): Tri => (xs.includes(true) ? true : xs.includes(null) ? null : false);
const not3 = (x: Tri): Tri => (x === null ? null : !x);

/** PostgreSQL LIKE with the default backslash escape; callers lower-case both sides for ILIKE. */
function ilike(text: string, pattern: string): boolean {
  let source = "";
  for (let i = 0; i < pattern.length; i += 1) {
    const ch = pattern[i]!;
    if (ch === "\\") {
      i += 1;
      source += (pattern[i] ?? "").replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
    } else if (ch === "%") source += "[\\s\\S]*";
    else if (ch === "_") source += "[\\s\\S]";
    else source += ch.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
  }
  return new RegExp(`^${source}$`, "u").test(text.toLowerCase());
}

/** How PostgreSQL would evaluate the Prisma filter: three-valued logic. */
function sql(where: Record<string, unknown>, row: Row): Tri {
  return and3(
    Object.entries(where).map(([key, arg]): Tri => {
      if (key === "AND") return and3((arg as Array<Record<string, unknown>>).map((w) => sql(w, row)));
      if (key === "OR") return or3((arg as Array<Record<string, unknown>>).map((w) => sql(w, row)));
      if (key === "NOT") return not3(sql(arg as Record<string, unknown>, row));
      const cell = row[key];
      if (cell === undefined) throw new Error(`unknown column ${key}`);
      if (arg === null) return cell === null; // IS NULL is two-valued
      if (cell === null) return null; // any comparison with NULL is UNKNOWN
      const filter = arg as Record<string, FilterValue>;
      const insensitive = filter["mode"] === "insensitive";
      return and3(
        Object.entries(filter)
          .filter(([op]) => op !== "mode")
          .map(([op, v]): Tri => {
            switch (op) {
              case "equals":
                return compare(cell, v) === 0;
              case "gt":
                return compare(cell, v) > 0;
              case "gte":
                return compare(cell, v) >= 0;
              case "lt":
                return compare(cell, v) < 0;
              case "lte":
                return compare(cell, v) <= 0;
              case "contains":
              case "startsWith":
              case "endsWith": {
                if (!insensitive) throw new Error("string operators must be case-insensitive");
                const p = String(v);
                const pattern = op === "contains" ? `%${p}%` : op === "startsWith" ? `${p}%` : `%${p}`;
                return ilike(String(cell), pattern.toLowerCase());
              }
              default:
                throw new Error(`unexpected filter ${op}`);
            }
          }),
      );
    }),
  );
}

const selects = (node: WhereNode, row: Row) => sql(toPrismaWhere(node, testSpec), row) === true;

// ---------------------------------------------------------------------------------------------

describe("where semantics", () => {
  it("round trip: a written AST parses back to the same AST", () => {
    fc.assert(
      fc.property(whereArb, ({ node, text }) => {
        expect(parseWhere(text, testSpec)).toEqual(node);
      }),
      { numRuns: 1000 },
    );
  });

  it("the compiled filter under SQL three-valued logic selects exactly what the AST means", () => {
    fc.assert(
      fc.property(whereArb, fc.array(rowArb, { minLength: 1, maxLength: 8 }), ({ node }, rows) => {
        for (const row of rows) expect(selects(node, row)).toBe(reference(node, row));
      }),
      { numRuns: 1000 },
    );
  });

  it("the record evaluator (webhook filters) selects exactly what the compiled filter selects in the database", () => {
    fc.assert(
      fc.property(whereArb, fc.array(rowArb, { minLength: 1, maxLength: 8 }), ({ node }, rows) => {
        for (const row of rows) expect(matchesWhere(node, row, testSpec)).toBe(selects(node, row));
      }),
      { numRuns: 1000 },
    );
  });

  it("NOT:cond selects exactly the rows cond does not, NULLs included", () => {
    fc.assert(
      fc.property(whereArb, fc.array(rowArb, { minLength: 1, maxLength: 8 }), ({ node }, rows) => {
        const negated: WhereNode = { kind: "not", condition: node };
        for (const row of rows) expect(selects(negated, row)).toBe(!selects(node, row));
      }),
      { numRuns: 1000 },
    );
  });

  it("example: NOT:email:x keeps the rows whose email is NULL", () => {
    const node = parseWhere("NOT:email:x", testSpec);
    const row = { email: null } as unknown as Row;
    expect(selects(node, { ...row })).toBe(true);
    // A naive { NOT: { email: { equals: "x" } } } would be UNKNOWN there, and drop the row.
    expect(sql({ NOT: { email: { equals: "x" } } }, row)).toBeNull();
  });

  it("example: NOT:clientId:<uuid> keeps the rows whose clientId is NULL", () => {
    const node = parseWhere(`NOT:clientId:${UUIDS[1].toUpperCase()}`, testSpec);
    expect(selects(node, { clientId: null })).toBe(true);
    expect(selects(node, { clientId: UUIDS[1] })).toBe(false);
    expect(selects(node, { clientId: UUIDS[2] })).toBe(true);
  });

  it("example: contains matches % and _ literally", () => {
    const node = parseWhere("firstName:contains:a_b", testSpec);
    expect(selects(node, { firstName: "xA_By" })).toBe(true);
    expect(selects(node, { firstName: "axb" })).toBe(false);
  });
});
