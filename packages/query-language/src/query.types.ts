// Shared types of the query language. The AST is plain data so services can log it, inspect it
// (for example to reject filters on a field they want to hide) or compile it to Prisma.

/** `uuid` is a PostgreSQL `uuid` column (Prisma `@db.Uuid`): equality only, with a well-formed uuid. */
export type FieldType = "string" | "int" | "decimal" | "boolean" | "datetime" | "enum" | "uuid";

export interface FieldSpec {
  type: FieldType;
  /** Nullable columns need special care when a condition is negated (see where.compiler.ts). */
  nullable: boolean;
  /** Required for `enum` fields: the only values equality may compare with. */
  enumValues?: readonly string[];
  /** False for a field `orderBy` may not name (a custom multiSelect: a set of options has no order); default true. */
  sortable?: boolean;
  /** An `int` field holding any safe integer (a custom integer field, stored as a JSON number), not a 32-bit column. */
  wideInteger?: boolean;
}

export interface QuerySpec {
  /** Every filterable and sortable scalar field, `id`, `businessId`, `createdAt`, `updatedAt` included. */
  fields: Record<string, FieldSpec>;
  /** Relations `include` may name; `default: true` ones are loaded unless removed with `-name`. */
  relations: Record<string, { default: boolean }>;
}

export type ComparisonOperator = "gt" | "gte" | "lt" | "lte";
export type StringOperator = "contains" | "startsWith" | "endsWith";
export type Operator = "equals" | ComparisonOperator | StringOperator;

/**
 * A value already converted to the field's type: `string` for string and enum fields, the
 * lower-case text for uuid fields, `number` for int fields, `boolean`, `Date` for datetime fields,
 * and for decimal fields the decimal text as a `string` (never a binary float, so no precision is
 * lost on the way to the database).
 */
export type FilterValue = string | number | boolean | Date;

export interface ConditionNode {
  kind: "condition";
  field: string;
  operator: Operator;
  value: FilterValue;
}

export interface AndNode {
  kind: "and";
  conditions: WhereNode[];
}

export interface OrNode {
  kind: "or";
  conditions: WhereNode[];
}

export interface NotNode {
  kind: "not";
  condition: WhereNode;
}

export type WhereNode = ConditionNode | AndNode | OrNode | NotNode;

export type SortDirection = "asc" | "desc";

export interface OrderTerm {
  field: string;
  direction: SortDirection;
}

export interface ListQuery {
  page: number;
  perPage: number;
  /** Prisma `skip`: (page - 1) * perPage. */
  skip: number;
  /** Prisma `take`: perPage. */
  take: number;
  where: WhereNode | undefined;
  orderBy: OrderTerm[];
  include: string[];
}

export interface PaginationMeta {
  total: number;
  lastPage: number;
  currentPage: number;
  perPage: number;
  prev: number | null;
  next: number | null;
}
