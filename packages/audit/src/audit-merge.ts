// The business's log is kept by three services; a page of it is the newest `perPage` of their pages
// merged (extensions §E7). Each source answers at most perPage + 1 entries after the same position with
// the same filters, so the merge holds more than perPage exactly when something follows the page.
import type { AuditEntryView } from "@crm/contracts";

/** Newest first: occurredAt descending, then id descending (UUID v7 text sorts by time, then randomness). */
export function newerFirst(a: AuditEntryView, b: AuditEntryView): number {
  if (a.occurredAt !== b.occurredAt) return a.occurredAt < b.occurredAt ? 1 : -1;
  return a.id < b.id ? 1 : a.id > b.id ? -1 : 0;
}

/** The first `perPage` of the sources merged newest first, and whether anything follows them. */
export function mergePages(sources: ReadonlyArray<readonly AuditEntryView[]>, perPage: number): { page: AuditEntryView[]; more: boolean } {
  const all = sources.flat().sort(newerFirst);
  return { page: all.slice(0, perPage), more: all.length > perPage };
}
