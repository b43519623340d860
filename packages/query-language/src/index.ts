// Public surface of @crm/query-language: pure parsing of list query parameters into Prisma-shaped
// arguments. See README.md for the grammar.
export type {
  AndNode,
  ComparisonOperator,
  ConditionNode,
  FieldSpec,
  FieldType,
  FilterValue,
  ListQuery,
  NotNode,
  Operator,
  OrderTerm,
  OrNode,
  PaginationMeta,
  QuerySpec,
  SortDirection,
  StringOperator,
  WhereNode,
} from "./query.types";
export {
  CASTS,
  DEFAULT_PAGE,
  DEFAULT_PER_PAGE,
  FILTER_OPERATORS,
  MAX_PER_PAGE,
  MAX_WHERE_CONDITIONS,
  MAX_WHERE_DEPTH,
  MAX_WHERE_LENGTH,
  QUERY_LIMITS,
  type CastName,
} from "./limits.constants";
export { parseWhere } from "./where.parser";
export { invalidWhere, type QueryParameter } from "./query.errors";
export { toPrismaWhere, escapeLike, type PrismaWhere } from "./where.compiler";
export { parseOrderBy, toPrismaOrderBy, DEFAULT_ORDER_BY } from "./order-by.parser";
export { parseInclude, toPrismaInclude } from "./include.parser";
export { newestFirstPage, type NewestFirstWindow } from "./newest-first-page";
export { paginationMeta, parsePagination, readPagination, type Pagination } from "./pagination.parser";
export { parseListQuery } from "./list-query.parser";
export { parseDate } from "./value.coercer";
export { matchesWhere, compareDecimal, type RecordLike } from "./where.evaluator";
