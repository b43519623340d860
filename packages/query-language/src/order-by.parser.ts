// `orderBy`: comma-separated `field:direction` pairs (interface §4, decisions §3 and §8). Every
// order ends with `id` so that pages of a stable data set never overlap or skip records.
import { hasOwn, invalidOrderBy } from "./query.errors";
import type { OrderTerm, QuerySpec, SortDirection } from "./query.types";

export const DEFAULT_ORDER_BY: readonly OrderTerm[] = Object.freeze([
  { field: "createdAt", direction: "desc" },
  { field: "id", direction: "desc" },
]);

export function parseOrderBy(input: string | undefined, spec: QuerySpec): OrderTerm[] {
  if (input === undefined) return DEFAULT_ORDER_BY.map((term) => ({ ...term }));
  if (typeof input !== "string") throw invalidOrderBy("orderBy must be a single string");
  const terms: OrderTerm[] = [];
  const seen = new Set<string>();
  for (const pair of input.split(",")) {
    if (pair === "") throw invalidOrderBy("empty orderBy pair");
    const parts = pair.split(":");
    if (parts.length !== 2) throw invalidOrderBy(`"${pair}" is not field:direction`);
    const [field, direction] = parts as [string, string];
    if (!hasOwn(spec.fields, field)) throw invalidOrderBy(`unknown sort field "${field}"`);
    if (direction !== "asc" && direction !== "desc") throw invalidOrderBy(`unknown direction "${direction}"`);
    // The same field twice is contradictory or redundant; either way the client should know.
    if (seen.has(field)) throw invalidOrderBy(`field "${field}" is sorted on twice`);
    seen.add(field);
    terms.push({ field, direction: direction satisfies SortDirection });
  }
  if (!seen.has("id")) terms.push({ field: "id", direction: terms[terms.length - 1]!.direction });
  return terms;
}

export function toPrismaOrderBy(terms: OrderTerm[]): Array<Record<string, "asc" | "desc">> {
  return terms.map((term) => ({ [term.field]: term.direction }));
}
