// `include` obeys permissions (extensions §E10): a relation embeds records of another resource, so a
// caller who may not read that resource must not get them through `include`. A relation the caller
// named (`include=invoices`) is refused with 401014, like a list of that resource would be; a default
// relation it did not name (a client's `contacts`) is left out of the answer, so a caller who may read
// only clients still reads them with the default query. Pure: the permissions come from the internal
// token, so the check costs no I/O, and nothing at all when no relation is loaded.
import { permission, recordResourceOf, type Permission, type RecordEntity } from "@crm/contracts";
import { errors } from "@crm/errors";
import type { EntityDefinition } from "../entities";

/** Who reads: the permissions of the internal token's principal (`Principal` is one). */
export interface Reader {
  permissions: readonly string[];
}

/** `{resource}.read` of each entity, built once. */
const readPermissionOf = Object.fromEntries(Object.entries(recordResourceOf).map(([entity, resource]) => [entity, permission(resource, "read")])) as Readonly<
  Record<RecordEntity, Permission>
>;

/** Whether `include` (already validated by the query language) names `relation` itself, not as `-relation`. */
function named(include: string | undefined, relation: string): boolean {
  if (include === undefined) return false;
  for (const element of include.split(",")) if (element === relation) return true;
  return false;
}

/**
 * `relations` (what `include` resolved to: the defaults, less `-name`s, plus names) without those
 * `reader` may not read; 401014 when such a relation was named in `include`.
 */
export function readableRelations(definition: EntityDefinition, relations: readonly string[], include: string | undefined, reader: Reader): readonly string[] {
  if (relations.length === 0) return relations;
  let readable: string[] | undefined;
  for (const [i, name] of relations.entries()) {
    const target = definition.relations[name]!.target;
    if (reader.permissions.includes(readPermissionOf[target])) {
      readable?.push(name);
      continue;
    }
    if (named(include, name)) throw errors.insufficientPermissions(undefined, { cause: `include=${name} needs ${readPermissionOf[target]}` });
    readable ??= relations.slice(0, i);
  }
  return readable ?? relations;
}
