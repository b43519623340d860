// The audit log (extensions §E7) as an async iterator of entries, newest first, following nextCursor
// page by page until the filtered log ends. Administrators only (permission users.update).
import type { CrmClient, CrmSchemas } from "./crm-client";

export type AuditEntry = CrmSchemas["AuditEntry"];

export interface AuditLogOptions {
  /** An action (`client.updated`) or a group (`client.*`, `auth.*`). */
  action?: string;
  actorId?: string;
  targetType?: string;
  targetId?: string;
  /** ISO 8601 date-times: entries at or after `since`, before `until`. */
  since?: string;
  until?: string;
  /** Entries per request, 1-100 (default 100). */
  perPage?: number;
  signal?: AbortSignal;
}

/** Every entry the filters select, newest first; each request asks for the page after the last. */
export async function* auditLog(client: CrmClient, options: AuditLogOptions = {}): AsyncGenerator<AuditEntry> {
  const { perPage = 100, signal, ...filters } = options;
  let cursor: string | null | undefined;
  do {
    const query = cursor ? { cursor, perPage: String(perPage) } : { ...filters, perPage: String(perPage) };
    const { data, error, response } = await client.GET("/api/v1/audit-log", { params: { query }, ...(signal ? { signal } : {}) });
    if (error || !data) throw new Error(`audit log: ${response.status} ${JSON.stringify(error)}`);
    yield* data.data;
    cursor = data.meta.nextCursor;
  } while (cursor);
}
