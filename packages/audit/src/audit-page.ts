// One page request of the audit log or of a record's history, as the client sent it: filters, size and,
// with a cursor, where the previous page ended; and the cursor of the page after an answered one.
import { AUDIT_LOG_FILTERS, type AuditEntryView } from "@crm/contracts";
import { errors } from "@crm/errors";
import type { AuditCursorCodec } from "./audit-cursor";
import { type AuditFilters, type AuditPosition, parseAuditFilters, parseAuditPerPage, sameFilters } from "./audit-query";

export interface AuditPageRequest {
  filters: AuditFilters;
  after?: AuditPosition;
  perPage: number;
}

export interface AuditPageScope {
  codec: AuditCursorCodec;
  businessId: string;
  /** "log", or "history:<entity>:<id>": a cursor is good for the scope it was made in only. */
  scope: string;
  /** Whether the route takes filters (the log does; a history does not). */
  filtered: boolean;
}

/**
 * The request `query` makes. With a cursor, its filters are the cursor's: filters sent beside it must be
 * the same (a client that repeats its query with the cursor is served), other ones are 400001.
 */
export function auditPageRequest(query: Readonly<Record<string, unknown>>, scope: AuditPageScope): AuditPageRequest {
  const perPage = parseAuditPerPage(query);
  const sent = scope.filtered ? parseAuditFilters(query) : {};
  if (query["cursor"] === undefined) return { filters: sent, perPage };
  const state = scope.codec.decode(scope.businessId, scope.scope, query["cursor"]);
  const named = AUDIT_LOG_FILTERS.some((name) => query[name] !== undefined);
  if (named && !sameFilters(sent, state.filters)) {
    throw errors.validationFailed([{ path: "cursor", message: "The cursor carries its query's filters: send none beside it, or the same ones" }]);
  }
  return { filters: state.filters, after: state.after, perPage };
}

/** The cursor after `page`'s last entry, or null when `more` says nothing follows. */
export function nextAuditCursor(scope: AuditPageScope, filters: AuditFilters, page: readonly AuditEntryView[], more: boolean): string | null {
  const last = page[page.length - 1];
  if (!more || !last) return null;
  return scope.codec.encode(scope.businessId, scope.scope, { filters, after: { occurredAt: last.occurredAt, id: last.id } });
}
