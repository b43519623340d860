// A record's audit entries (extensions §E7) follow from its events: every record a write touches gets
// exactly one event, so it gets exactly one entry, with the event's action, the record as target, and
// for an update the fields its `previousAttributes` names (§E1.4: the same fields, the same values) as
// {from, to}; the record itself for a create; nothing for a delete (or a restore).
// A write through RecordService's `write()` gets its entries from its events with no more code (the
// trash's `{entity}.restored` included); a change with no event (the trash's purge, by hand or by
// retention) writes its entries itself in its transaction, one `purgedAuditChange` per record gone.
import { CUSTOM_FIELDS_PROPERTY, type EventEnvelope, type RecordEntity } from "@crm/contracts";
import { type AuditChange, updateChanges } from "@crm/audit";

type Values = Readonly<Record<string, unknown>>;

/**
 * An update's {from, to} per changed field. `previousAttributes.customFields` holds only the keys that
 * changed (§E4), so its `to` is narrowed to the same keys: the entry says what changed, not the record.
 */
function changesOfUpdate(previous: Values, after: Values): Record<string, { from: unknown; to: unknown }> {
  const changes = updateChanges(previous, after);
  const custom = changes[CUSTOM_FIELDS_PROPERTY];
  if (custom && custom.from !== null && typeof custom.from === "object") {
    const values = (after[CUSTOM_FIELDS_PROPERTY] ?? {}) as Values;
    custom.to = Object.fromEntries(Object.keys(custom.from).map((key) => [key, values[key] ?? null]));
  }
  return changes;
}

export function recordAuditChange(event: EventEnvelope): AuditChange {
  const entity = event.type.slice(0, event.type.indexOf("."));
  const target = { type: entity, id: typeof event.data["id"] === "string" ? event.data["id"] : null };
  if (event.type.endsWith(".created")) return { action: event.type, target, changes: event.data };
  if (event.previousAttributes !== undefined) return { action: event.type, target, changes: changesOfUpdate(event.previousAttributes, event.data) };
  return { action: event.type, target, changes: null };
}

export function recordAuditChanges(events: readonly EventEnvelope[]): AuditChange[] {
  return events.map(recordAuditChange);
}

/** The entry of a record removed for good (no event: extensions §E5), a dependent that went with it included. */
export function purgedAuditChange(record: { entity: RecordEntity; id: string }): AuditChange {
  return { action: `${record.entity}.purged`, target: { type: record.entity, id: record.id }, changes: null };
}
