// One audit entry as a service writes it (extensions §E7): what changed (action, target, changes) from
// the use case, who and from where (the AuditContext) from the request.
import { type AuditActorType, type AuditEntryView, uuidv7 } from "@crm/contracts";
import type { AuditContext } from "./audit-context";
import { redactSecrets } from "./redaction";

/** What a use case says about its change. */
export interface AuditChange {
  /** `client.created`, `user.updated`, `auth.signedIn`, ... (contracts' auditActions). */
  action: string;
  target: { type: string; id: string | null };
  /** `{field: {from, to}}` for an update, the record for a create, null otherwise (see changesOf). */
  changes?: Record<string, unknown> | null;
}

/** A row of a service's AuditEntry table. `businessId` null: an event no business owns (a failed sign-in for an unknown email). */
export interface AuditRow {
  id: string;
  businessId: string | null;
  occurredAt: Date;
  action: string;
  actorType: AuditActorType;
  actorId: string | null;
  actorLabel: string | null;
  targetType: string;
  targetId: string | null;
  changes: Record<string, unknown> | null;
  requestId: string | null;
  ip: string | null;
  userAgent: string | null;
}

/** The row of `change`, made by `context`'s actor in `businessId` at `now`; secrets redacted. */
export function auditRow(businessId: string | null, change: AuditChange, context: AuditContext, now: Date): AuditRow {
  return {
    id: uuidv7(now.getTime()),
    businessId,
    occurredAt: now,
    action: change.action,
    actorType: context.actor.type,
    actorId: context.actor.id,
    actorLabel: context.actor.label,
    targetType: change.target.type,
    targetId: change.target.id,
    changes: change.changes === undefined || change.changes === null ? null : redactSecrets(change.changes),
    requestId: context.requestId,
    ip: context.ip,
    userAgent: context.userAgent,
  };
}

/** An update's changes from the fields that changed and their previous values (`previousAttributes`, §E1.4) and the record after it. */
export function updateChanges(previous: Readonly<Record<string, unknown>>, after: Readonly<Record<string, unknown>>): Record<string, { from: unknown; to: unknown }> {
  const changes: Record<string, { from: unknown; to: unknown }> = {};
  for (const [field, from] of Object.entries(previous)) changes[field] = { from, to: after[field] ?? null };
  return changes;
}

/** The fields whose values differ between two views (JSON equality), `updatedAt` left out as previousAttributes leaves it. */
export function diffChanges(before: Readonly<Record<string, unknown>>, after: Readonly<Record<string, unknown>>): Record<string, { from: unknown; to: unknown }> {
  const changes: Record<string, { from: unknown; to: unknown }> = {};
  for (const field of new Set([...Object.keys(before), ...Object.keys(after)])) {
    if (field === "updatedAt") continue;
    const from = before[field] ?? null;
    const to = after[field] ?? null;
    if (JSON.stringify(from) !== JSON.stringify(to)) changes[field] = { from, to };
  }
  return changes;
}

/** A row as the API shows it. */
export function auditEntryView(row: AuditRow): AuditEntryView {
  return {
    id: row.id,
    occurredAt: row.occurredAt.toISOString(),
    action: row.action,
    actor: { type: row.actorType, id: row.actorId, label: row.actorLabel },
    target: { type: row.targetType, id: row.targetId },
    changes: row.changes,
    requestId: row.requestId,
    ip: row.ip,
    userAgent: row.userAgent,
  };
}
