// `GET /{entity}/{id}/history` (extensions §E7): a record's audit entries, newest first, from
// crm-records' own AuditEntry table: they outlive the record (deleted or purged), so the id is not
// looked up; an id nothing was audited for answers an empty page.
import { Router } from "express";
import { auditEntryView, type AuditCursorCodec, auditPageRequest, nextAuditCursor, readAuditRows, type RawDatabase } from "@crm/audit";
import { historyRoutes, isUuid, type RecordEntity } from "@crm/contracts";
import { errors } from "@crm/errors";
import { mountRoute } from "@crm/service-kit";
import { businessOf } from "./records.router";

export function historyRouter(db: RawDatabase, cursors: AuditCursorCodec, entities: readonly RecordEntity[]): Router {
  const router = Router();
  for (const entity of entities) {
    mountRoute(router, historyRoutes[entity].getHistory, async (req, res) => {
      const businessId = businessOf(req);
      const raw = String(req.params["id"] ?? "");
      if (!isUuid(raw)) throw errors.notFound();
      const id = raw.toLowerCase();
      const scope = { codec: cursors, businessId, scope: `history:${entity}:${id}`, filtered: false };
      const { after, perPage } = auditPageRequest(req.query as Record<string, unknown>, scope);
      const rows = await readAuditRows(db, "records", { businessId, filters: { targetType: entity, targetId: id }, ...(after ? { after } : {}), limit: perPage + 1 });
      const page = rows.slice(0, perPage).map(auditEntryView);
      res.json({ success: true, data: page, meta: { perPage, nextCursor: nextAuditCursor(scope, {}, page, rows.length > perPage) } });
    });
  }
  return router;
}
