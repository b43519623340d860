// The audit log's query (extensions §E7): filters, page size and the position after which a page
// starts, parsed from what the client sent. Every problem is 400001 naming its parameter; never a 500.
import { AUDIT_PER_PAGE_DEFAULT, AUDIT_PER_PAGE_MAX, auditActionGroups, auditActions } from "@crm/contracts";
import { type ErrorDetail, errors } from "@crm/errors";

/** Narrowing conditions, all of them ANDed. `actions`: the action names `action` stands for. */
export interface AuditFilters {
  action?: string;
  actorId?: string;
  targetType?: string;
  targetId?: string;
  /** ISO 8601, as normalised by toISOString. */
  since?: string;
  until?: string;
}

/** The newest-first position a page continues after: the last entry of the page before. */
export interface AuditPosition {
  occurredAt: string;
  id: string;
}

const TEXT_MAX = 200;
const knownActions = new Set(auditActions);

/** The action names a valid `action` filter stands for: itself, or its group's for `prefix.*`. */
export function actionsOf(action: string): string[] {
  if (action.endsWith(".*")) {
    const group = action.slice(0, -2);
    return (auditActionGroups[group] ?? []).map((verb) => `${group}.${verb}`);
  }
  return [action];
}

function text(query: Readonly<Record<string, unknown>>, name: string, details: ErrorDetail[]): string | undefined {
  const value = query[name];
  if (value === undefined) return undefined;
  if (typeof value !== "string" || value === "" || value.length > TEXT_MAX) {
    details.push({ path: name, message: `${name} must be given once, as 1 to ${TEXT_MAX} characters` });
    return undefined;
  }
  // PostgreSQL text cannot hold NUL, so no entry ever matches one: a client error, not a failed query.
  if (value.includes("\u0000")) {
    details.push({ path: name, message: `${name} must not contain a NUL character` });
    return undefined;
  }
  return value;
}

function instant(query: Readonly<Record<string, unknown>>, name: string, details: ErrorDetail[]): string | undefined {
  const value = text(query, name, details);
  if (value === undefined) return undefined;
  // A date-time with its zone, or a bare date (midnight UTC); anything Date.parse would guess at is refused.
  const shaped = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2}))?$/.test(value);
  const ms = shaped ? Date.parse(value) : Number.NaN;
  if (!Number.isFinite(ms)) {
    details.push({ path: name, message: `${name} must be an ISO 8601 date-time such as 2026-01-31T12:00:00Z` });
    return undefined;
  }
  return new Date(ms).toISOString();
}

/** The filters of `query`, or 400001 naming each bad one. */
export function parseAuditFilters(query: Readonly<Record<string, unknown>>): AuditFilters {
  const details: ErrorDetail[] = [];
  const filters: AuditFilters = {};
  const action = text(query, "action", details);
  if (action !== undefined) {
    if (actionsOf(action).every((name) => knownActions.has(name)) && actionsOf(action).length > 0) filters.action = action;
    else details.push({ path: "action", message: "Not an audit action or a group of them such as client.* or auth.*" });
  }
  for (const name of ["actorId", "targetType", "targetId"] as const) {
    const value = text(query, name, details);
    if (value !== undefined) filters[name] = value;
  }
  const since = instant(query, "since", details);
  const until = instant(query, "until", details);
  if (since !== undefined) filters.since = since;
  if (until !== undefined) filters.until = until;
  if (since !== undefined && until !== undefined && since >= until) details.push({ path: "until", message: "until must be after since" });
  if (details.length > 0) throw errors.validationFailed(details);
  return filters;
}

/** `perPage`: 1 to 100 (default 10, as every list: interface §8), else 400001. */
export function parseAuditPerPage(query: Readonly<Record<string, unknown>>): number {
  const raw = query["perPage"];
  if (raw === undefined) return AUDIT_PER_PAGE_DEFAULT;
  const value = typeof raw === "string" && /^\d{1,3}$/.test(raw) ? Number(raw) : Number.NaN;
  if (!(value >= 1 && value <= AUDIT_PER_PAGE_MAX)) throw errors.validationFailed([{ path: "perPage", message: `perPage must be an integer from 1 to ${AUDIT_PER_PAGE_MAX}` }]);
  return value;
}

/** Whether two filter sets ask the same. */
export function sameFilters(a: AuditFilters, b: AuditFilters): boolean {
  const keys = ["action", "actorId", "targetType", "targetId", "since", "until"] as const;
  return keys.every((key) => a[key] === b[key]);
}

/** Filters and position as query parameters for a service's internal endpoint (and back: parseAuditFilters, positionOf). */
export function internalQuery(filters: AuditFilters, after: AuditPosition | undefined, limit: number): URLSearchParams {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(filters)) if (value !== undefined) params.set(name, value);
  if (after) {
    params.set("afterOccurredAt", after.occurredAt);
    params.set("afterId", after.id);
  }
  params.set("limit", String(limit));
  return params;
}

/** The position and limit an internal query names (the gateway made it; still checked, 400001). */
export function internalPage(query: Readonly<Record<string, unknown>>): { after?: AuditPosition; limit: number } {
  const limit = Number(query["limit"]);
  if (!Number.isInteger(limit) || limit < 1 || limit > AUDIT_PER_PAGE_MAX + 1) throw errors.validationFailed([{ path: "limit", message: "1 to 101" }]);
  const occurredAt = query["afterOccurredAt"];
  const id = query["afterId"];
  if (occurredAt === undefined && id === undefined) return { limit };
  if (typeof occurredAt !== "string" || typeof id !== "string" || !Number.isFinite(Date.parse(occurredAt))) {
    throw errors.validationFailed([{ path: "afterId", message: "afterOccurredAt and afterId go together" }]);
  }
  return { after: { occurredAt, id }, limit };
}
