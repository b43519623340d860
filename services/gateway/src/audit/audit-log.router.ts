// `GET /api/v1/audit-log` (extensions §E7): the one route that reads the whole business's log. Each
// owning service keeps its entries in its own database, written in the transaction of the change
// (crm-records: records; identity: users, keys, sign-ins; webhook-delivery: webhooks), so the gateway
// asks the three at once for the page after the same position with the same filters, perPage + 1
// each, and answers the newest perPage of the merge (docs/api.md, "Audit log"). The cursor is sealed
// here, with the key every gateway and service derives from INTERNAL_TOKEN_SECRET.
import { Router } from "express";
import { AuditCursorCodec, auditPageRequest, INTERNAL_AUDIT_LOG_PATH, internalQuery, mergePages, nextAuditCursor } from "@crm/audit";
import { type AuditEntryView, auditRoutes, type Principal } from "@crm/contracts";
import { errors } from "@crm/errors";
import { mountRoute } from "@crm/service-kit";
import type { Forwarder } from "../http/forwarder";

/** The services that keep audit entries. */
const AUDITED_SERVICES = ["crm-records", "identity", "webhook-delivery"] as const;

export function auditLogRouter(forwarder: Pick<Forwarder, "ask">, internalTokenSecret: string): Router {
  const codec = new AuditCursorCodec(internalTokenSecret);
  const router = Router();
  // The guard authenticated the caller and checked the route's permission; mountRoute checks it again
  // from the same declaration, on the request's principal.
  router.use(auditRoutes.listAuditLog.path, (req, res, next) => {
    const principal = res.locals.principal;
    if (principal) req.principal = principal;
    next();
  });
  mountRoute(router, auditRoutes.listAuditLog, async (req, res) => {
    const principal = req.principal as Principal;
    const scope = { codec, businessId: principal.businessId, scope: "log", filtered: true };
    const { filters, after, perPage } = auditPageRequest(req.query as Record<string, unknown>, scope);
    const path = `${INTERNAL_AUDIT_LOG_PATH}?${internalQuery(filters, after, perPage + 1).toString()}`;
    const pages = await Promise.all(AUDITED_SERVICES.map((service) => entriesOf(forwarder, service, path, principal, req.requestId)));
    const { page, more } = mergePages(pages, perPage);
    res.json({ success: true, data: page, meta: { perPage, nextCursor: nextAuditCursor(scope, filters, page, more) } });
  });
  return router;
}

async function entriesOf(
  forwarder: Pick<Forwarder, "ask">,
  service: (typeof AUDITED_SERVICES)[number],
  path: string,
  principal: Principal,
  requestId: string,
): Promise<AuditEntryView[]> {
  const answer = await forwarder.ask(service, path, principal, requestId);
  if (answer.status !== 200) throw errors.unavailable(undefined, { cause: `${service} answered ${answer.status} to ${path}` });
  return (JSON.parse(answer.body.toString("utf8")) as { data: AuditEntryView[] }).data;
}
