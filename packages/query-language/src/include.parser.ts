// `include`: comma-separated relation names; `-name` removes a default relation (interface §4,
// decisions §3 and §8). Naming a relation adds to the defaults, it does not replace them.
import { hasOwn, invalidQuery } from "./query.errors";
import type { QuerySpec } from "./query.types";

export function parseInclude(input: string | undefined, spec: QuerySpec): string[] {
  const defaults = Object.keys(spec.relations).filter((name) => spec.relations[name]!.default);
  if (input === undefined) return defaults;
  if (typeof input !== "string") throw invalidQuery("include must be a single string");
  const removed = new Set<string>();
  const added: string[] = [];
  for (const element of input.split(",")) {
    const removing = element.startsWith("-");
    const name = removing ? element.slice(1) : element;
    if (name === "") throw invalidQuery("empty include element");
    if (!hasOwn(spec.relations, name)) throw invalidQuery(`unknown relation "${name}"`);
    if (removing) removed.add(name);
    else added.push(name);
  }
  // "defaults minus removed, plus added": naming a relation wins over removing it.
  const result = defaults.filter((name) => !removed.has(name));
  for (const name of added) if (!result.includes(name)) result.push(name);
  return result;
}

/** `["contacts"]` -> `{ contacts: true }`, the Prisma `include` argument. */
export function toPrismaInclude(relations: readonly string[]): Record<string, true> {
  // fromEntries defines own properties, so even a hostile name cannot reach a prototype.
  return Object.fromEntries(relations.map((name) => [name, true] as const));
}
