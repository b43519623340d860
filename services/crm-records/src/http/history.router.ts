// `GET /{entity}/{id}/history` (extensions §E7): a record's audit entries, newest first, from
// crm-records' own AuditEntry table: they outlive the record (deleted or purged). Only an id with no
// entry in the business is looked up: a record the business has (one older than the audit log) answers
// an empty page; one it never had, another business's included, is 404001 as on every route with an id.
import { Router } from "express";
import { auditEntryView, type AuditCursorCodec, auditPageRequest, nextAuditCursor, readAuditRows, type RawDatabase } from "@crm/audit";
import { historyRoutes, isUuid } from "@crm/contracts";
import { errors } from "@crm/errors";
import { mountRoute } from "@crm/service-kit";
import type { EntityDefinition } from "../entities";
import { delegateOf, type PrismaClient } from "../persistence/prisma";
import { businessOf } from "./records.router";

export function historyRouter(db: RawDatabase & PrismaClient, cursors: AuditCursorCodec, definitions: readonly EntityDefinition[]): Router {
  const router = Router();
  for (const definition of definitions) {
    const { entity } = definition;
    mountRoute(router, historyRoutes[entity].getHistory, async (req, res) => {
      const businessId = businessOf(req);
      const raw = String(req.params["id"] ?? "");
      if (!isUuid(raw)) throw errors.notFound();
      const id = raw.toLowerCase();
      const scope = { codec: cursors, businessId, scope: `history:${entity}:${id}`, filtered: false };
      const { after, perPage } = auditPageRequest(req.query as Record<string, unknown>, scope);
      const rows = await readAuditRows(db, "records", { businessId, filters: { targetType: entity, targetId: id }, ...(after ? { after } : {}), limit: perPage + 1 });
      if (rows.length === 0 && !after) {
        const record = await delegateOf(db, definition.delegate).findFirst({ where: { id, businessId }, select: { id: true } });
        if (!record) throw errors.notFound();
      }
      const page = rows.slice(0, perPage).map(auditEntryView);
      res.json({ success: true, data: page, meta: { perPage, nextCursor: nextAuditCursor(scope, {}, page, rows.length > perPage) } });
    });
  }
  return router;
}
