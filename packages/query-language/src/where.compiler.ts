// Compiles the `where` AST into a Prisma `where` argument (plain objects; no Prisma import).
//
// Negation is pushed down to the leaves (De Morgan) instead of emitting Prisma `NOT` around whole
// groups, because SQL's three-valued logic makes `NOT (email = 'x')` UNKNOWN, not TRUE, when
// `email` is NULL, so a naive `{ NOT: ... }` would silently drop those rows. The contract is that
// `NOT:cond` matches exactly the records `cond` does not match, NULLs included; so a negated leaf
// on a nullable field becomes `field IS NULL OR NOT (field <op> value)`. Positive leaves need no
// care: a comparison with NULL is not TRUE, which is exactly "does not match".
import type { ConditionNode, FilterValue, QuerySpec, WhereNode } from "./query.types";

export type PrismaWhere = Record<string, unknown>;

export function toPrismaWhere(node: WhereNode | undefined, spec: QuerySpec): PrismaWhere {
  return node === undefined ? {} : compile(node, spec, false);
}

function compile(node: WhereNode, spec: QuerySpec, negated: boolean): PrismaWhere {
  switch (node.kind) {
    case "condition":
      return negated ? negatedLeaf(node, spec) : { [node.field]: leafFilter(node) };
    case "and": {
      const parts = node.conditions.map((child) => compile(child, spec, negated));
      return negated ? { OR: parts } : { AND: parts };
    }
    case "or": {
      const parts = node.conditions.map((child) => compile(child, spec, negated));
      return negated ? { AND: parts } : { OR: parts };
    }
    case "not":
      return compile(node.condition, spec, !negated);
  }
}

function negatedLeaf(node: ConditionNode, spec: QuerySpec): PrismaWhere {
  const negation = { NOT: { [node.field]: leafFilter(node) } };
  // A field missing from the spec can only come from a hand-built AST; treating it as nullable
  // is correct either way, merely less compact.
  const nullable = Object.hasOwn(spec.fields, node.field) ? spec.fields[node.field]!.nullable : true;
  return nullable ? { OR: [{ [node.field]: null }, negation] } : negation;
}

function leafFilter(node: ConditionNode): Record<string, FilterValue> {
  switch (node.operator) {
    case "equals":
    case "gt":
    case "gte":
    case "lt":
    case "lte":
      return { [node.operator]: node.value };
    case "contains":
    case "startsWith":
    case "endsWith":
      // Prisma turns these into ILIKE without escaping, so a client's `%` or `_` would act as a
      // wildcard; escaping them (and the escape character) keeps the match literal.
      return { [node.operator]: escapeLike(String(node.value)), mode: "insensitive" };
  }
}

/** Backslash is PostgreSQL's default LIKE escape character. */
export function escapeLike(value: string): string {
  return value.replace(/[\\%_]/g, (ch) => `\\${ch}`);
}
