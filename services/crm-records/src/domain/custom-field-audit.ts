// The audit entries of custom field definition changes (extensions §E7 with §E4). A definition has no
// id of its own: its target is `{type: "field", id: "<entity>.<key>"}`, so `targetType=field` finds
// every definition change and `targetId=client.externalId` one key's (a key defined again after a
// permanent delete continues the same history). Actions: `field.created` (changes: the definition),
// `field.updated` for every change a PATCH or an archiving DELETE makes, archiving and un-archiving
// included (changes: `{field: {from, to}}` of what changed, `updatedAt` left out as previousAttributes
// leaves it), `field.deleted` for the permanent delete (changes: null). A create's changes are the
// definition without its `key`: the key is in the target's id, never changes, and `key` is a name the
// redaction rule (@crm/audit redaction.ts) replaces everywhere, for API key material.
import { type AuditChange, diffChanges } from "@crm/audit";
import type { CustomFieldDefinitionView, RecordEntity } from "@crm/contracts";

/** The `targetType` of every definition's entries. */
export const FIELD_AUDIT_TARGET = "field";

function target(entity: RecordEntity, key: string): AuditChange["target"] {
  return { type: FIELD_AUDIT_TARGET, id: `${entity}.${key}` };
}

export function fieldCreated(entity: RecordEntity, view: CustomFieldDefinitionView): AuditChange {
  const { key, ...definition } = view;
  return { action: "field.created", target: target(entity, key), changes: definition };
}

export function fieldUpdated(entity: RecordEntity, before: CustomFieldDefinitionView, after: CustomFieldDefinitionView): AuditChange {
  return { action: "field.updated", target: target(entity, after.key), changes: diffChanges(before, after) };
}

export function fieldDeleted(entity: RecordEntity, key: string): AuditChange {
  return { action: "field.deleted", target: target(entity, key), changes: null };
}
