// `orderBy`: comma-separated `field:direction` pairs (interface §4, decisions §3 and §8). Every
// order ends with `id` so that pages of a stable data set never overlap or skip records.
import { hasOwn, invalidOrderBy, quoted } from "./query.errors";
import type { OrderTerm, QuerySpec, SortDirection } from "./query.types";

export const DEFAULT_ORDER_BY: readonly OrderTerm[] = Object.freeze([
  { field: "createdAt", direction: "desc" },
  { field: "id", direction: "desc" },
]);

export function parseOrderBy(input: string | undefined, spec: QuerySpec): OrderTerm[] {
  if (input === undefined) return DEFAULT_ORDER_BY.map((term) => ({ ...term }));
  if (typeof input !== "string") throw invalidOrderBy("orderBy must be given once, as one string");
  const terms: OrderTerm[] = [];
  const seen = new Set<string>();
  for (const [index, pair] of input.split(",").entries()) {
    const position = `pair ${index + 1}`;
    if (pair === "") throw invalidOrderBy(`empty orderBy pair (${position})`);
    const parts = pair.split(":");
    if (parts.length !== 2) throw invalidOrderBy(`${quoted(pair)} is not field:direction (${position})`);
    const [field, direction] = parts as [string, string];
    if (!hasOwn(spec.fields, field)) throw invalidOrderBy(`unknown sort field ${quoted(field)} (${position})`);
    if (spec.fields[field]!.sortable === false) throw invalidOrderBy(`field ${quoted(field)} cannot be sorted on (${position})`);
    if (direction !== "asc" && direction !== "desc") throw invalidOrderBy(`unknown direction ${quoted(direction)} for ${quoted(field)}: asc or desc (${position})`);
    // The same field twice is contradictory or redundant; either way the client should know.
    if (seen.has(field)) throw invalidOrderBy(`field ${quoted(field)} is sorted on twice (${position})`);
    seen.add(field);
    terms.push({ field, direction: direction satisfies SortDirection });
  }
  if (!seen.has("id")) terms.push({ field: "id", direction: terms[terms.length - 1]!.direction });
  return terms;
}

export function toPrismaOrderBy(terms: OrderTerm[]): Array<Record<string, "asc" | "desc">> {
  return terms.map((term) => ({ [term.field]: term.direction }));
}
