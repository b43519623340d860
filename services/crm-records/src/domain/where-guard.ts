// `id`, `businessId` and `clientId` are PostgreSQL `uuid` columns, but the query language treats
// them as the opaque strings the interface says they are. Comparing a uuid column with text that
// is not a UUID would be a database error (a 500), so filters on them are adjusted first:
// equality with a non-UUID can match nothing (`in: []`, whose negation matches everything, exactly
// as `NOT:` must); ordering comparisons and substring operators need UUID semantics the client
// cannot express, so they are a bad query (400019).
import { isUuid } from "@crm/contracts";
import { invalidWhere } from "@crm/query-language";

type PrismaWhere = Record<string, unknown>;

const COMBINATORS = new Set(["AND", "OR", "NOT"]);

export function guardUuidFilters(where: PrismaWhere, uuidFields: ReadonlySet<string>): PrismaWhere {
  const out: PrismaWhere = {};
  for (const [key, value] of Object.entries(where)) {
    if (COMBINATORS.has(key)) {
      out[key] = Array.isArray(value) ? value.map((child) => guardUuidFilters(child as PrismaWhere, uuidFields)) : guardUuidFilters(value as PrismaWhere, uuidFields);
    } else if (uuidFields.has(key) && value !== null && typeof value === "object") {
      out[key] = guardLeaf(key, value as Record<string, unknown>);
    } else {
      out[key] = value;
    }
  }
  return out;
}

function guardLeaf(field: string, filter: Record<string, unknown>): Record<string, unknown> {
  if ("contains" in filter || "startsWith" in filter || "endsWith" in filter) {
    throw invalidWhere(`substring operators do not apply to id field "${field}"`);
  }
  const [operator, value] = Object.entries(filter)[0] ?? [];
  if (typeof value !== "string" || isUuid(value)) return filter;
  if (operator === "equals") return { in: [] };
  throw invalidWhere(`"${value}" is not an id, so it cannot be compared with "${field}"`);
}
