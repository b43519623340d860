// GET /api/v1/events (extensions §E6): a business's events in the order they became readable (the
// relay's publish order, given as feed positions: docs/performance.md, D33), each exactly once, only
// those of entities the caller may read, after an opaque cursor, optionally waiting for the next one.
import {
  CUSTOM_FIELDS_PROPERTY,
  eventActions,
  eventName,
  FEED_PER_PAGE_MAX,
  FEED_TYPES_MAX,
  FEED_WAIT_MAX_S,
  isEventName,
  permission,
  recordEntities,
  recordResourceOf,
  type EventName,
  type Principal,
  type RecordEntity,
} from "@crm/contracts";
import { errors, validationError } from "@crm/errors";
import type { EntityDefinition } from "../entities";
import { FeedCursorCodec } from "../domain/feed-cursor";
import { parseEventFieldSelection, selectFields } from "../domain/field-selection";
import type { RecordView } from "../domain/record.serializer";
import type { FeedStore } from "../persistence/feed.store";
import { type CustomFieldCache, customFieldsOf } from "./custom-field-cache";
import type { FeedWaiters } from "./feed-waiters";

export interface FeedQuery {
  after?: unknown;
  types?: unknown;
  perPage?: unknown;
  wait?: unknown;
  fields?: unknown;
}

export interface FeedPage {
  /** Each event's envelope as stored, in feed order. */
  events: unknown[];
  meta: { perPage: number; nextCursor: string; hasMore: boolean };
}

const entitySet = new Set<string>(recordEntities);

export class FeedService {
  private readonly cursors: FeedCursorCodec;

  constructor(
    private readonly store: FeedStore,
    private readonly waiters: FeedWaiters,
    cursorSecret: string,
    private readonly definitions: Readonly<Record<RecordEntity, EntityDefinition>>,
    private readonly customFields: CustomFieldCache,
  ) {
    this.cursors = new FeedCursorCodec(cursorSecret);
  }

  async read(principal: Principal, query: FeedQuery): Promise<FeedPage> {
    const perPage = intParam(query.perPage, "perPage", 1, FEED_PER_PAGE_MAX, FEED_PER_PAGE_MAX);
    const waitMs = Math.round(numberParam(query.wait, "wait", 0, FEED_WAIT_MAX_S, 0) * 1000);
    const types = readableTypes(requestedTypes(query.types), principal);
    const entities = recordEntities.filter((entity) => eventActions.some((action) => types.has(eventName(entity, action))));
    const businessId = principal.businessId;
    const selection = parseEventFieldSelection(
      entities.map((entity) => this.definitions[entity]),
      query.fields,
      await this.customKeysNamed(query.fields, businessId, entities),
    );
    const horizon = await this.store.horizon(businessId);
    let position = horizon;
    if (query.after !== undefined) {
      if (typeof query.after !== "string") throw validationError("after", "Expected one cursor");
      position = this.cursors.decode(businessId, query.after);
      if (position < horizon) throw errors.cursorExpired(undefined, { cause: `feed cursor ${position} is before the retention horizon ${horizon}` });
    }
    const filter = types.size === ALL_EVENTS ? undefined : [...types];
    const deadline = Date.now() + waitMs;
    for (;;) {
      const left = deadline - Date.now();
      // Registered before the read: an event made readable during it still wakes this request.
      const wake = left > 0 ? this.waiters.register(businessId, left) : undefined;
      const rows = await this.store.after(businessId, position, filter, perPage + 1);
      if (rows.length > 0 || !wake) {
        wake?.cancel();
        const page = rows.slice(0, perPage);
        const last = page.at(-1)?.position ?? position;
        return {
          events: page.map((row) => {
            const event = JSON.parse(row.json) as { data: RecordView };
            if (selection) event.data = selectFields(event.data, selection);
            return event;
          }),
          meta: { perPage, nextCursor: this.cursors.encode(businessId, last), hasMore: rows.length > perPage },
        };
      }
      await wake.promise;
    }
  }

  /**
   * The active custom keys of `entities` when `fields` names a custom value (extensions §E8 with §E4),
   * else none: a feed request that does not name one reads no definitions.
   */
  private async customKeysNamed(fields: unknown, businessId: string, entities: readonly RecordEntity[]): Promise<ReadonlySet<string>> {
    if (typeof fields !== "string" || !fields.includes(CUSTOM_FIELD_PREFIX)) return new Set();
    const business = await customFieldsOf(this.customFields, businessId);
    return new Set(
      entities.flatMap((entity) =>
        business
          .rules(entity)
          .filter((rule) => !rule.isArchived)
          .map((rule) => rule.key),
      ),
    );
  }
}

const CUSTOM_FIELD_PREFIX = `${CUSTOM_FIELDS_PROPERTY}.`;

const ALL_EVENTS = recordEntities.length * eventActions.length;

/** `types` as event names; undefined when absent. 400001 for an unknown name or more than FEED_TYPES_MAX. */
function requestedTypes(raw: unknown): Set<EventName> | undefined {
  if (raw === undefined) return undefined;
  if (typeof raw !== "string") throw validationError("types", "Expected one comma-separated list");
  const names = raw.split(",").map((name) => name.trim());
  if (names.length > FEED_TYPES_MAX) throw validationError("types", `At most ${FEED_TYPES_MAX} names`);
  const types = new Set<EventName>();
  for (const name of names) {
    const entity = name.endsWith(".*") ? name.slice(0, -2) : undefined;
    if (entity !== undefined && entitySet.has(entity)) {
      for (const action of eventActions) types.add(eventName(entity as RecordEntity, action));
    } else if (isEventName(name)) {
      types.add(name);
    } else {
      throw validationError("types", `Unknown event type "${name.slice(0, 60)}": use event names such as client.created, or client.*`);
    }
  }
  return types;
}

/** Of `requested` (every event when undefined), those whose entity `principal` may read; 401014 when none. */
function readableTypes(requested: Set<EventName> | undefined, principal: Principal): Set<EventName> {
  const readable = new Set<EventName>();
  for (const entity of recordEntities) {
    if (!principal.permissions.includes(permission(recordResourceOf[entity], "read"))) continue;
    for (const action of eventActions) {
      const name = eventName(entity, action);
      if (!requested || requested.has(name)) readable.add(name);
    }
  }
  if (readable.size === 0) throw errors.insufficientPermissions(undefined, { cause: "no event of the feed is readable with these permissions" });
  return readable;
}

function numberParam(raw: unknown, name: string, min: number, max: number, fallback: number): number {
  if (raw === undefined) return fallback;
  const value = typeof raw === "string" && /^\d+(\.\d+)?$/.test(raw) ? Number(raw) : Number.NaN;
  if (!(value >= min && value <= max)) throw validationError(name, `Expected a number from ${min} to ${max}`);
  return value;
}

function intParam(raw: unknown, name: string, min: number, max: number, fallback: number): number {
  if (raw === undefined) return fallback;
  const value = typeof raw === "string" && /^\d+$/.test(raw) ? Number(raw) : Number.NaN;
  if (!(value >= min && value <= max)) throw validationError(name, `Expected an integer from ${min} to ${max}`);
  return value;
}
