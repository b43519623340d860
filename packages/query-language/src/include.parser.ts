// `include`: comma-separated relation names; `-name` removes a default relation (interface §4,
// decisions §3 and §8). Naming a relation adds to the defaults, it does not replace them.
import { hasOwn, invalidInclude, quoted } from "./query.errors";
import type { QuerySpec } from "./query.types";

export function parseInclude(input: string | undefined, spec: QuerySpec): string[] {
  const defaults = Object.keys(spec.relations).filter((name) => spec.relations[name]!.default);
  if (input === undefined) return defaults;
  if (typeof input !== "string") throw invalidInclude("include must be given once, as one string");
  const removed = new Set<string>();
  const added: string[] = [];
  const elements = input.split(",");
  for (const [index, element] of elements.entries()) {
    const removing = element.startsWith("-");
    const name = removing ? element.slice(1) : element;
    if (name === "") throw invalidInclude(`empty include element at position ${index + 1}`);
    if (!hasOwn(spec.relations, name)) throw invalidInclude(`unknown relation ${quoted(name)}${relationsNote(spec)}`);
    if (removing) removed.add(name);
    else added.push(name);
  }
  // "defaults minus removed, plus added": naming a relation wins over removing it.
  const result = defaults.filter((name) => !removed.has(name));
  for (const name of added) if (!result.includes(name)) result.push(name);
  return result;
}

/** The relations there are, for a message about one that is not. */
function relationsNote(spec: QuerySpec): string {
  const names = Object.keys(spec.relations);
  return names.length === 0 ? " (this resource has no relations)" : ` (relations: ${names.join(", ")})`;
}

/** `["contacts"]` -> `{ contacts: true }`, the Prisma `include` argument. */
export function toPrismaInclude(relations: readonly string[]): Record<string, true> {
  // fromEntries defines own properties, so even a hostile name cannot reach a prototype.
  return Object.fromEntries(relations.map((name) => [name, true] as const));
}
