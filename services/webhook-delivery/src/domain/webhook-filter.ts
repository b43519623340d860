// Webhook filters (extensions §E1.5): a `where` expression of the list grammar (one parser,
// @crm/query-language), evaluated against each event's data by the language's record evaluator.
// A filter must make sense for every entity the webhook subscribes to, so it is parsed against
// each of them when it is written; at delivery time it is parsed (once, cached) for the event's entity.
import { isEventName, recordFields, type RecordEntity } from "@crm/contracts";
import { isAppError, validationError } from "@crm/errors";
import { matchesWhere, parseWhere, type QuerySpec, type WhereNode } from "@crm/query-language";

const specs = Object.fromEntries(Object.entries(recordFields).map(([entity, fields]) => [entity, { fields: { ...fields }, relations: {} } satisfies QuerySpec])) as Record<
  RecordEntity,
  QuerySpec
>;

/** The entity of a record event name (`invoice.updated` -> `invoice`), or undefined for anything else. */
export function entityOfEvent(event: string): RecordEntity | undefined {
  return isEventName(event) ? (event.slice(0, event.indexOf(".")) as RecordEntity) : undefined;
}

/** 400001 with `details[0].path` = `filter` unless `filter` is a valid `where` for every entity of `events`. */
export function checkWebhookFilter(filter: string, events: readonly string[]): void {
  const entities = [...new Set(events.map(entityOfEvent).filter((e): e is RecordEntity => e !== undefined))];
  for (const entity of entities) {
    try {
      parseWhere(filter, specs[entity]);
    } catch (err) {
      // The parser's reason (its internal `cause`) is the useful part here: which field, which position.
      const reason = isAppError(err) && typeof err.cause === "string" ? err.cause : "invalid filter";
      const scope = entities.length > 1 ? ` (the webhook's ${entity} events)` : "";
      throw validationError("filter", `Invalid filter${scope}: ${reason}`);
    }
  }
}

const CACHE_LIMIT = 1_000;

/**
 * Decides, per event, whether a webhook's filter lets it through. Parsed filters are cached per
 * (entity, filter) text, so the consumer parses each filter once, not once per event.
 */
export class WebhookFilters {
  private readonly parsed = new Map<string, WhereNode | Error>();

  /**
   * True when the event's data matches. A filter that cannot be read for this event (written before
   * a field was renamed, say) lets the event through and `onUnreadable` is told: an unexpected
   * delivery is visible and harmless, silently stopping every delivery is not (Twenty #6664).
   */
  matches(filter: string | null, event: string, data: Readonly<Record<string, unknown>>, onUnreadable?: (err: Error) => void): boolean {
    if (filter === null) return true;
    const entity = entityOfEvent(event);
    if (!entity) return true;
    const node = this.parse(filter, entity);
    if (node instanceof Error) {
      onUnreadable?.(node);
      return true;
    }
    return matchesWhere(node, data, specs[entity]);
  }

  private parse(filter: string, entity: RecordEntity): WhereNode | Error {
    const key = `${entity}\u0000${filter}`;
    let node = this.parsed.get(key);
    if (node === undefined) {
      try {
        node = parseWhere(filter, specs[entity]);
      } catch (err) {
        node = err instanceof Error ? err : new Error(String(err));
      }
      if (this.parsed.size >= CACHE_LIMIT) this.parsed.clear();
      this.parsed.set(key, node);
    }
    return node;
  }
}
