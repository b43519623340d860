// Field selection (extensions §E8): `fields=a,b,...` keeps only those fields of each record in the
// answer, plus `id` always; `<relation>.<field>` keeps fields of the records an included relation
// holds (each keeps its `id` too, and the relation its `<relation>Truncated` flag). Strict, like the
// rest of the query language: an empty list or name, an unknown name, a relation the answer does not
// include → 400019 at `fields`; a relation the caller may not read → 401014 (§E10). `customFields.<key>`
// names an active custom field (§E4); an archived or unknown key is an unknown name. Pure: no I/O.
import { CUSTOM_FIELDS_PROPERTY, truncatedRelationField, type RecordEntity } from "@crm/contracts";
import { errors } from "@crm/errors";
import type { EntityDefinition } from "../entities";
import type { RecordView } from "./record.serializer";

/** Most names one `fields` may list, and its longest text (extensions §E8). */
export const MAX_SELECTED_FIELDS = 100;
export const MAX_FIELDS_LENGTH = 2000;

export interface FieldSelection {
  /** The record's own fields to keep, `id` included. */
  own: ReadonlySet<string>;
  /** Per relation named as `<relation>.<field>`: its records' fields to keep, `id` included. */
  related: ReadonlyMap<string, ReadonlySet<string>>;
  /** Keys of `customFields` named as `customFields.<key>` (extensions §E4); the object holds only these. */
  custom?: ReadonlySet<string>;
}

function invalidFields(message: string) {
  return errors.invalidQuery([{ path: "fields", message }], { cause: message });
}

/** The built-in fields of a record's answer: its columns, and an invoice's or quote's line items. */
export function builtInFields(definition: EntityDefinition): ReadonlySet<string> {
  const names = new Set(Object.keys(definition.columns));
  if (definition.document) names.add(definition.document.itemsRelation);
  return names;
}

/** The names `fields` lists, within its bounds; undefined when absent. */
function fieldNames(input: unknown): string[] | undefined {
  if (input === undefined) return undefined;
  if (typeof input !== "string") throw invalidFields("fields must be given once, as one string");
  if (input.length > MAX_FIELDS_LENGTH) throw invalidFields(`fields is longer than ${MAX_FIELDS_LENGTH} characters`);
  const names = input.split(",");
  if (names.length > MAX_SELECTED_FIELDS) throw invalidFields(`fields lists more than ${MAX_SELECTED_FIELDS} names`);
  return names;
}

/**
 * `fields` for the change feed's `data` (extensions §E6, §E8): the records of several entities, with no
 * relations. A name must be a field of at least one of `entities` (those whose events the answer may
 * hold), or `customFields.<key>` for a key in `customKeys` (the active definitions of those entities);
 * each event's `data` keeps `id` and the named fields it has. Undefined when absent.
 */
export function parseEventFieldSelection(entities: readonly EntityDefinition[], input: unknown, customKeys: ReadonlySet<string> = new Set()): FieldSelection | undefined {
  const names = fieldNames(input);
  if (!names) return undefined;
  const known = new Set(entities.flatMap((definition) => [...builtInFields(definition)]));
  const own = new Set(["id"]);
  const custom = new Set<string>();
  for (const [index, name] of names.entries()) {
    if (name === "") throw invalidFields(`empty field name at position ${index + 1}`);
    const dot = name.indexOf(".");
    if (dot >= 0 && name.slice(0, dot) === CUSTOM_FIELDS_PROPERTY) {
      const key = name.slice(dot + 1);
      if (!customKeys.has(key)) throw invalidFields(`unknown custom field "${name}" for the events this answer may hold`);
      custom.add(key);
      continue;
    }
    if (dot >= 0) throw invalidFields(`"${name}": an event's data holds the record without relations`);
    if (!known.has(name)) throw invalidFields(`unknown field "${name}" for the events this answer may hold`);
    own.add(name);
  }
  return custom.size > 0 ? { own, related: new Map(), custom } : { own, related: new Map() };
}

/**
 * `fields` as the client sent it, checked against the entity: undefined when absent (every field).
 * `requested`: the relations `include` resolved to; `readable`: those of them the caller may read.
 */
export function parseFieldSelection(
  definition: EntityDefinition,
  definitions: Readonly<Record<RecordEntity, EntityDefinition>>,
  input: unknown,
  requested: readonly string[],
  readable: readonly string[],
  customKeys: ReadonlySet<string> = new Set(),
): FieldSelection | undefined {
  const names = fieldNames(input);
  if (!names) return undefined;
  const own = new Set(["id"]);
  const related = new Map<string, Set<string>>();
  const custom = new Set<string>();
  const builtIn = builtInFields(definition);
  for (const [index, name] of names.entries()) {
    if (name === "") throw invalidFields(`empty field name at position ${index + 1}`);
    const dot = name.indexOf(".");
    if (dot < 0) {
      if (!builtIn.has(name)) throw invalidFields(`unknown field "${name}"`);
      own.add(name);
      continue;
    }
    const relation = name.slice(0, dot);
    const field = name.slice(dot + 1);
    if (relation === CUSTOM_FIELDS_PROPERTY) {
      if (!customKeys.has(field)) throw invalidFields(`unknown custom field "${name}"`);
      custom.add(field);
      continue;
    }
    if (!Object.hasOwn(definition.relations, relation)) throw invalidFields(`unknown field "${name}"`);
    if (!requested.includes(relation)) throw invalidFields(`"${name}" names relation "${relation}", which the answer does not include (include=${relation})`);
    if (!builtInFields(definitions[definition.relations[relation]!.target]).has(field)) throw invalidFields(`unknown field "${name}"`);
    if (!readable.includes(relation)) throw errors.insufficientPermissions(undefined, { cause: `fields=${name} needs read permission on ${relation}` });
    let fields = related.get(relation);
    if (!fields) related.set(relation, (fields = new Set(["id"])));
    fields.add(field);
  }
  return custom.size > 0 ? { own, related, custom } : { own, related };
}

function pick(record: RecordView, keep: ReadonlySet<string>): RecordView {
  const out: RecordView = {};
  for (const [key, value] of Object.entries(record)) if (keep.has(key)) out[key] = value;
  return out;
}

/** The answer `selection` asks for: the view's own fields it names, and only the relations it names fields of. */
export function selectFields(view: RecordView, selection: FieldSelection | undefined): RecordView {
  if (!selection) return view;
  const flags = new Set([...selection.related.keys()].map(truncatedRelationField));
  const out: RecordView = {};
  for (const [key, value] of Object.entries(view)) {
    const keep = selection.related.get(key);
    if (key === CUSTOM_FIELDS_PROPERTY && selection.custom) out[key] = pick(value as RecordView, selection.custom);
    else if (selection.own.has(key) || flags.has(key)) out[key] = value;
    else if (keep) out[key] = Array.isArray(value) ? value.map((record: RecordView) => pick(record, keep)) : value === null ? null : pick(value as RecordView, keep);
  }
  return out;
}
