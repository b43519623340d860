// The published limits and vocabulary of the query language (decisions §3, §8). Exported so the
// capabilities endpoint and the OpenAPI description quote the same numbers the parser enforces.
import type { Operator } from "./query.types";

export const DEFAULT_PAGE = 1;
export const DEFAULT_PER_PAGE = 10;
export const MAX_PER_PAGE = 100;

/** Longest accepted `where`, in characters (Unicode code points). */
export const MAX_WHERE_LENGTH = 2000;
/** Most leaf comparisons one `where` may hold. */
export const MAX_WHERE_CONDITIONS = 50;
/** Deepest nesting: every `OR:[...]` and every `NOT:` adds one level. */
export const MAX_WHERE_DEPTH = 5;

/** Operators written in `field:operator:value`; equality has no name on the wire. */
export const FILTER_OPERATORS = ["gt", "gte", "lt", "lte", "contains", "startsWith", "endsWith"] as const satisfies readonly Operator[];
export const CASTS = ["int", "float", "bool", "date"] as const;
export type CastName = (typeof CASTS)[number];

export const QUERY_LIMITS = {
  perPageDefault: DEFAULT_PER_PAGE,
  perPageMax: MAX_PER_PAGE,
  whereMaxLength: MAX_WHERE_LENGTH,
  whereMaxConditions: MAX_WHERE_CONDITIONS,
  whereMaxDepth: MAX_WHERE_DEPTH,
} as const;
