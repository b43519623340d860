// The second evaluator of the `where` AST: over one record in memory (a JSON object as GET returns
// it), where where.compiler.ts builds a database filter. Same meaning as a list's filter (decisions
// §3, §8): a comparison with a null or missing field does not match, `NOT:cond` matches exactly what
// `cond` does not (nulls included), equality is exact and case-sensitive, `contains`/`startsWith`/
// `endsWith` are case-insensitive. Used by webhook filters (extensions §E1.5). Pure; never throws.
import type { ConditionNode, FieldSpec, FilterValue, QuerySpec, WhereNode } from "./query.types";

export type RecordLike = Readonly<Record<string, unknown>>;

/** Whether `record` matches `node`. A field missing from `spec` is compared as a string. */
export function matchesWhere(node: WhereNode, record: RecordLike, spec: QuerySpec): boolean {
  switch (node.kind) {
    case "and":
      return node.conditions.every((child) => matchesWhere(child, record, spec));
    case "or":
      return node.conditions.some((child) => matchesWhere(child, record, spec));
    case "not":
      return !matchesWhere(node.condition, record, spec);
    case "condition":
      return matchesCondition(node, Object.hasOwn(record, node.field) ? record[node.field] : undefined, spec.fields[node.field]);
  }
}

function matchesCondition(node: ConditionNode, cell: unknown, field: FieldSpec | undefined): boolean {
  if (cell === null || cell === undefined) return false;
  switch (node.operator) {
    case "contains":
    case "startsWith":
    case "endsWith": {
      if (typeof cell !== "string") return false;
      const text = cell.toLowerCase();
      const part = String(node.value).toLowerCase();
      return node.operator === "contains" ? text.includes(part) : node.operator === "startsWith" ? text.startsWith(part) : text.endsWith(part);
    }
    default: {
      const order = compare(cell, node.value, field?.type ?? "string");
      if (order === undefined) return false;
      switch (node.operator) {
        case "equals":
          return order === 0;
        case "gt":
          return order > 0;
        case "gte":
          return order >= 0;
        case "lt":
          return order < 0;
        case "lte":
          return order <= 0;
      }
    }
  }
}

/** Sign of cell − value in the field's type; undefined when the cell is not of that type. */
function compare(cell: unknown, value: FilterValue, type: FieldSpec["type"]): number | undefined {
  switch (type) {
    case "string":
    case "enum":
      return typeof cell === "string" ? sign(cell, String(value)) : undefined;
    case "uuid":
      // PostgreSQL compares uuids by value: case does not matter, and hex order is byte order.
      return typeof cell === "string" ? sign(cell.toLowerCase(), String(value).toLowerCase()) : undefined;
    case "boolean":
      return typeof cell === "boolean" && typeof value === "boolean" ? (cell === value ? 0 : cell ? 1 : -1) : undefined;
    case "int":
      return typeof cell === "number" && Number.isFinite(cell) ? sign(cell, Number(value)) : undefined;
    case "decimal":
      return typeof cell === "number" || typeof cell === "string" ? compareDecimal(String(cell), String(value)) : undefined;
    case "datetime": {
      if (!(value instanceof Date)) return undefined;
      const at = cell instanceof Date ? cell.getTime() : typeof cell === "string" ? Date.parse(cell) : Number.NaN;
      return Number.isNaN(at) ? undefined : sign(at, value.getTime());
    }
  }
}

function sign<T extends string | number>(a: T, b: T): number {
  return a === b ? 0 : a < b ? -1 : 1;
}

const PLAIN_DECIMAL = /^([+-]?)(\d+)(?:\.(\d+))?$/;

/**
 * Exact comparison of two decimal texts, as PostgreSQL `numeric` compares them: `0.30000000000000001`
 * is more than `0.3` (binary floats would call them equal). A JSON number's shortest text is what was
 * stored for every amount the product keeps (at most 15 significant digits); exponent forms fall
 * back to floating point.
 */
export function compareDecimal(a: string, b: string): number | undefined {
  const x = PLAIN_DECIMAL.exec(a);
  const y = PLAIN_DECIMAL.exec(b);
  if (!x || !y) {
    const [p, q] = [Number(a), Number(b)];
    return Number.isNaN(p) || Number.isNaN(q) ? undefined : sign(p, q);
  }
  const [ix, fx] = [x[2]!.replace(/^0+(?=\d)/, ""), (x[3] ?? "").replace(/0+$/, "")];
  const [iy, fy] = [y[2]!.replace(/^0+(?=\d)/, ""), (y[3] ?? "").replace(/0+$/, "")];
  const zeroX = /^0*$/.test(ix + fx);
  const zeroY = /^0*$/.test(iy + fy);
  const negX = x[1] === "-" && !zeroX;
  const negY = y[1] === "-" && !zeroY;
  if (negX !== negY) return negX ? -1 : 1;
  let magnitude: number;
  if (ix.length !== iy.length) magnitude = ix.length < iy.length ? -1 : 1;
  else {
    const width = Math.max(fx.length, fy.length);
    magnitude = sign(ix + fx.padEnd(width, "0"), iy + fy.padEnd(width, "0"));
  }
  return negX ? -magnitude : magnitude;
}
