// One router for every entity: the seven routes declared per entity, permission-checked, business-scoped.
import { Router, type Request } from "express";
import { isUuid, ok, okList, recordRoutes, type RecordEntity } from "@crm/contracts";
import { errors } from "@crm/errors";
import { auditContextOf } from "@crm/audit";
import { mountRoute, principalOf } from "@crm/service-kit";
import type { EntityDefinition } from "../entities";
import type { RecordService } from "../application/record.service";
import type { TrashService } from "../application/trash.service";
import { noneMatchFails, recordEtag } from "../domain/record-etag";
import { permanentParam } from "./permanent-param";
import { answeredByClaimOnRetry, createClaimOf, REPLAYED_HEADER } from "./idempotency-claim";
import { parseBatchBody, parseRecordBody } from "./record-body";

/** The caller's business, from the internal token only. Identity issues UUIDs; anything else has no business here. */
export function businessOf(req: Request): string {
  const { businessId } = principalOf(req);
  if (!isUuid(businessId)) throw errors.businessRequired();
  return businessId.toLowerCase();
}

function idParam(req: Request): string {
  return String(req.params["id"] ?? "");
}

export function createRecordsRouter(service: RecordService, trash: TrashService, definitions: Readonly<Record<RecordEntity, EntityDefinition>>): Router {
  const router = Router();
  for (const definition of Object.values(definitions)) {
    const routes = recordRoutes[definition.entity];

    mountRoute(router, routes.list, async (req, res) => {
      // Relations obey the caller's permissions (extensions §E10): the principal's, from the internal token.
      const { data, meta } = await service.list(definition, businessOf(req), req.query as Record<string, unknown>, principalOf(req));
      res.json(okList(data, meta));
    });

    // Conditional requests (extensions §E2.3): every single-record answer carries the record's ETag.
    mountRoute(router, routes.get, async (req, res) => {
      // The ETag is the whole record's, whatever `fields` selects (extensions §E8).
      const { view, answer } = await service.get(definition, businessOf(req), idParam(req), req.query as Record<string, unknown>, principalOf(req));
      const etag = recordEtag(definition, view);
      res.setHeader("ETag", etag);
      if (noneMatchFails(req.get("if-none-match"), etag)) return void res.status(304).end();
      res.json(ok(answer));
    });

    mountRoute(router, routes.create, async (req, res) => {
      const businessId = businessOf(req);
      const input = parseRecordBody(definition.createSchema, req.body);
      const claim = createClaimOf(req, businessId, definition.entity);
      const { views, replayed } = await answeredByClaimOnRetry(claim, () => service.create(definition, businessId, input, auditContextOf(req), claim));
      const view = views[0]!;
      if (replayed) res.setHeader(REPLAYED_HEADER, "true");
      res.setHeader("ETag", recordEtag(definition, view));
      res.status(201).json(ok(view));
    });

    mountRoute(router, routes.createBatch, async (req, res) => {
      const businessId = businessOf(req);
      const inputs = parseBatchBody(definition.createSchema, req.body);
      const claim = createClaimOf(req, businessId, `${definition.entity} batch`);
      const { views, replayed } = await answeredByClaimOnRetry(claim, () => service.createMany(definition, businessId, inputs, auditContextOf(req), claim));
      if (replayed) res.setHeader(REPLAYED_HEADER, "true");
      res.status(201).json(ok(views));
    });

    const update = async (req: Request, res: import("express").Response) => {
      const businessId = businessOf(req);
      const id = idParam(req);
      // An id that cannot exist is 404 before the body is looked at, like an unknown one.
      if (!isUuid(id)) throw errors.notFound();
      const input = parseRecordBody(definition.updateSchema, req.body);
      const view = await service.update(definition, businessId, id, input, auditContextOf(req), req.get("if-match"));
      res.setHeader("ETag", recordEtag(definition, view));
      res.status(200).json(ok(view));
    };
    mountRoute(router, routes.patch, update);
    mountRoute(router, routes.put, update);

    mountRoute(router, routes.delete, async (req, res) => {
      const businessId = businessOf(req);
      const view = permanentParam(req)
        ? await trash.purge(definition, businessId, idParam(req), auditContextOf(req), req.get("if-match"))
        : await service.remove(definition, businessId, idParam(req), auditContextOf(req), req.get("if-match"));
      res.setHeader("ETag", recordEtag(definition, view));
      res.status(200).json(ok(view));
    });

    mountRoute(router, routes.restore, async (req, res) => {
      const view = await trash.restore(definition, businessOf(req), idParam(req), auditContextOf(req));
      res.setHeader("ETag", recordEtag(definition, view));
      res.status(200).json(ok(view));
    });
  }
  return router;
}
