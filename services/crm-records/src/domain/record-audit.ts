// A record's audit entries (extensions §E7) follow from its events: every record a write touches gets
// exactly one event, so it gets exactly one entry, with the event's action, the record as target, and
// for an update the fields its `previousAttributes` names (§E1.4: the same fields, the same values) as
// {from, to}; the record itself for a create; nothing for a delete (or a restore).
// A write through RecordService's `write()` gets its entries from its events with no more code (the
// trash's `{entity}.restored` included); a change with no event (the trash's purge, by hand or by
// retention) writes its entries itself in its transaction, one `purgedAuditChange` per record gone.
import type { EventEnvelope, RecordEntity } from "@crm/contracts";
import { type AuditChange, updateChanges } from "@crm/audit";

export function recordAuditChange(event: EventEnvelope): AuditChange {
  const entity = event.type.slice(0, event.type.indexOf("."));
  const target = { type: entity, id: typeof event.data["id"] === "string" ? event.data["id"] : null };
  if (event.type.endsWith(".created")) return { action: event.type, target, changes: event.data };
  if (event.previousAttributes !== undefined) return { action: event.type, target, changes: updateChanges(event.previousAttributes, event.data) };
  return { action: event.type, target, changes: null };
}

export function recordAuditChanges(events: readonly EventEnvelope[]): AuditChange[] {
  return events.map(recordAuditChange);
}

/** The entry of a record removed for good (no event: extensions §E5), a dependent that went with it included. */
export function purgedAuditChange(record: { entity: RecordEntity; id: string }): AuditChange {
  return { action: `${record.entity}.purged`, target: { type: record.entity, id: record.id }, changes: null };
}
