// `GET /internal/audit-log`: a service's own entries for the gateway's merge (extensions §E7). The
// caller's business is the internal token's principal's; the filters, position and limit are the ones
// the gateway parsed from the client's query (parsed again here: nothing from outside is trusted).
import { Router } from "express";
import { errors } from "@crm/errors";
import { auditEntryView } from "./audit-entry";
import { internalPage, parseAuditFilters } from "./audit-query";
import type { AuditSchema } from "./audit-sql";
import { type RawDatabase, readAuditRows } from "./audit-store";

export const INTERNAL_AUDIT_LOG_PATH = "/internal/audit-log";

/** Mount under the service's internal routes (createServiceApp's `internal`). */
export function internalAuditRouter(db: RawDatabase, schema: AuditSchema): Router {
  const router = Router();
  router.get(INTERNAL_AUDIT_LOG_PATH.slice("/internal".length), async (req, res) => {
    const principal = req.principal;
    if (!principal) throw errors.authenticationRequired();
    const query = req.query as Record<string, unknown>;
    const filters = parseAuditFilters(query);
    const { after, limit } = internalPage(query);
    const rows = await readAuditRows(db, schema, { businessId: principal.businessId, filters, ...(after ? { after } : {}), limit });
    res.json({ data: rows.map(auditEntryView) });
  });
  return router;
}
