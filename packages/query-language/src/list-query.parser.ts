// One call for a list endpoint: turns Express `req.query` into everything Prisma needs.
// Checks run in a fixed order (pagination, where, orderBy, include) so the error a client sees
// for a request with several problems is deterministic.
import { parseInclude } from "./include.parser";
import { parseOrderBy } from "./order-by.parser";
import { parsePagination } from "./pagination.parser";
import { invalidInclude, invalidOrderBy, invalidWhere } from "./query.errors";
import type { ListQuery, QuerySpec } from "./query.types";
import { parseWhere } from "./where.parser";

export function parseListQuery(query: Record<string, unknown>, spec: QuerySpec): ListQuery {
  const pagination = parsePagination(query);

  // A repeated parameter arrives as an array (`?where=a&where=b`); which one the client meant is
  // unknowable, so it is refused rather than picking one.
  const where = query["where"];
  if (where !== undefined && typeof where !== "string") throw invalidWhere("where must be given once, as one string");
  const orderBy = query["orderBy"];
  if (orderBy !== undefined && typeof orderBy !== "string") throw invalidOrderBy("orderBy must be given once, as one string");
  const include = query["include"];
  if (include !== undefined && typeof include !== "string") throw invalidInclude("include must be given once, as one string");

  return {
    ...pagination,
    where: where === undefined ? undefined : parseWhere(where, spec),
    orderBy: parseOrderBy(orderBy, spec),
    include: parseInclude(include, spec),
  };
}
