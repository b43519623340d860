// Webhook filters (extensions §E1.5): a `where` expression of the list grammar (one parser,
// @crm/query-language), evaluated against each event's data by the language's record evaluator.
// A filter must make sense for every entity the webhook subscribes to, so it is parsed against
// each of them when it is written; at delivery time it is parsed (once, cached) for the event's entity.
// `customFields.<key>` names a custom value (custom-field-filter.ts says how, without the definitions).
import { type CustomFieldType, CUSTOM_FIELDS_PROPERTY, type DefinedCustomFields, isEventName, recordFields, type RecordEntity } from "@crm/contracts";
import { isAppError, validationError } from "@crm/errors";
import { type FieldSpec, matchesWhere, parseWhere, type QuerySpec, type WhereNode } from "@crm/query-language";
import { customFieldSpecs, isCustomFieldName, matchesCustomCondition } from "./custom-field-filter";

/** The fields `filter` may name on `entity`'s events: the record's own, and the custom keys it names. */
function specFor(entity: RecordEntity, filter: string): QuerySpec {
  return { fields: { ...recordFields[entity], ...customFieldSpecs(filter) }, relations: {} };
}

/** Whether `data` matches `node`: built-in fields by the language's evaluator, custom values by theirs. */
function matchesFilter(node: WhereNode, data: Readonly<Record<string, unknown>>, spec: QuerySpec): boolean {
  switch (node.kind) {
    case "and":
      return node.conditions.every((child) => matchesFilter(child, data, spec));
    case "or":
      return node.conditions.some((child) => matchesFilter(child, data, spec));
    case "not":
      return !matchesFilter(node.condition, data, spec);
    case "condition":
      return isCustomFieldName(node.field) ? matchesCustomCondition(node, data, spec.fields[node.field]) : matchesWhere(node, data, spec);
  }
}

/** The entity of a record event name (`invoice.updated` -> `invoice`), or undefined for anything else. */
export function entityOfEvent(event: string): RecordEntity | undefined {
  return isEventName(event) ? (event.slice(0, event.indexOf(".")) as RecordEntity) : undefined;
}

/** The `customFields.<key>` fields `node` compares, in the order written. */
function customFieldsNamed(node: WhereNode, into: string[] = []): string[] {
  switch (node.kind) {
    case "and":
    case "or":
      for (const child of node.conditions) customFieldsNamed(child, into);
      return into;
    case "not":
      return customFieldsNamed(node.condition, into);
    case "condition":
      if (isCustomFieldName(node.field)) into.push(node.field);
      return into;
  }
}

/** How a definition's type reads in the grammar: as a built-in field of that type would (decimals and times as the built-ins have them). */
const FIELD_TYPE_OF: Readonly<Record<CustomFieldType, FieldSpec["type"]>> = {
  text: "string",
  longText: "string",
  email: "string",
  url: "string",
  select: "string",
  multiSelect: "string",
  number: "decimal",
  integer: "decimal",
  boolean: "boolean",
  date: "datetime",
  dateTime: "datetime",
};

/** 400001 at `filter` with the parser's reason (its internal `cause`: which field, which position). */
function parsedOrRefused(filter: string, spec: QuerySpec, scope: string): WhereNode {
  try {
    return parseWhere(filter, spec);
  } catch (err) {
    const reason = isAppError(err) && typeof err.cause === "string" ? err.cause : "invalid filter";
    throw validationError("filter", `Invalid filter${scope}: ${reason}`);
  }
}

/**
 * 400001 with `details[0].path` = `filter` unless `filter` is a valid `where` for every entity of
 * `events`. `defined`: the business's active custom fields per entity (from crm-records, through the
 * gateway): a `customFields.<key>` an entity there does not define is an unknown field of that entity,
 * and a defined one is read as a built-in field of its type (§E4: the same operators, casts and
 * errors). Without it, keys are not checked and each is typed by its cast (customFieldSpecs).
 */
export function checkWebhookFilter(filter: string, events: readonly string[], defined?: DefinedCustomFields): void {
  const entities = [...new Set(events.map(entityOfEvent).filter((e): e is RecordEntity => e !== undefined))];
  for (const entity of entities) {
    const scope = entities.length > 1 ? ` (the webhook's ${entity} events)` : "";
    const node = parsedOrRefused(filter, specFor(entity, filter), scope);
    const fields = defined?.[entity];
    if (fields === undefined) continue;
    const named = customFieldsNamed(node);
    const unknown = named.find((field) => !Object.hasOwn(fields, field.slice(CUSTOM_FIELDS_PROPERTY.length + 1)));
    if (unknown !== undefined) throw validationError("filter", `Invalid filter${scope}: unknown or archived custom field "${unknown}" of ${entity}`);
    const typed = Object.fromEntries(named.map((field) => [field, { type: FIELD_TYPE_OF[fields[field.slice(CUSTOM_FIELDS_PROPERTY.length + 1)]!], nullable: true }]));
    parsedOrRefused(filter, { fields: { ...recordFields[entity], ...typed }, relations: {} }, scope);
  }
}

const CACHE_LIMIT = 1_000;

/**
 * Decides, per event, whether a webhook's filter lets it through. Parsed filters are cached per
 * (entity, filter) text, so the consumer parses each filter once, not once per event.
 */
export class WebhookFilters {
  private readonly parsed = new Map<string, { node: WhereNode; spec: QuerySpec } | Error>();

  /**
   * True when the event's data matches. A filter that cannot be read for this event (written before
   * a field was renamed, say) lets the event through and `onUnreadable` is told: an unexpected
   * delivery is visible and harmless, silently stopping every delivery is not (Twenty #6664).
   */
  matches(filter: string | null, event: string, data: Readonly<Record<string, unknown>>, onUnreadable?: (err: Error) => void): boolean {
    if (filter === null) return true;
    const entity = entityOfEvent(event);
    if (!entity) return true;
    const parsed = this.parse(filter, entity);
    if (parsed instanceof Error) {
      onUnreadable?.(parsed);
      return true;
    }
    return matchesFilter(parsed.node, data, parsed.spec);
  }

  private parse(filter: string, entity: RecordEntity): { node: WhereNode; spec: QuerySpec } | Error {
    const key = `${entity}\u0000${filter}`;
    let parsed = this.parsed.get(key);
    if (parsed === undefined) {
      const spec = specFor(entity, filter);
      try {
        parsed = { node: parseWhere(filter, spec), spec };
      } catch (err) {
        parsed = err instanceof Error ? err : new Error(String(err));
      }
      if (this.parsed.size >= CACHE_LIMIT) this.parsed.clear();
      this.parsed.set(key, parsed);
    }
    return parsed;
  }
}
