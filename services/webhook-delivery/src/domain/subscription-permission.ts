// Who may point a webhook at records (extensions §E10): a delivery carries the whole record, so
// subscribing to `{entity}.*` reads that entity. The caller who sets what a webhook receives (its
// events, creating it or changing them) must hold `{resource}.read` of every entity it then names;
// otherwise a key scoped to webhooks.create alone would receive every record in full. Decided from
// the permissions of the internal token's principal: no I/O.
import { permission, recordEntities, recordResourceOf, type Permission, type RecordEntity } from "@crm/contracts";
import { errors } from "@crm/errors";

/** Who subscribes: the permissions of the internal token's principal (`Principal` is one). */
export interface Subscriber {
  permissions: readonly string[];
}

const readPermissionOf = new Map<string, Permission>(recordEntities.map((entity: RecordEntity) => [entity, permission(recordResourceOf[entity], "read")]));

/** The read permission an event name needs: `invoice.created` -> `invoices.read`. */
function readPermissionFor(event: string): Permission | undefined {
  return readPermissionOf.get(event.slice(0, event.indexOf(".")));
}

/** 401014 unless `subscriber` may read the records of every event in `events` (validated names). */
export function requireReadableEvents(events: readonly string[], subscriber: Subscriber): void {
  for (const event of events) {
    const needed = readPermissionFor(event);
    // Every subscribable name is a record event; an unknown one was refused by validation already.
    if (needed === undefined || !subscriber.permissions.includes(needed)) {
      throw errors.insufficientPermissions(undefined, { cause: `subscribing to ${event} needs ${needed ?? "a record event"}` });
    }
  }
}
