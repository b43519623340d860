// The custom field definition routes of every entity (extensions §E4), as declared in
// @crm/contracts (custom-fields.routes.ts). Mounted before the records' routes, so `/{entity}/fields`
// is never read as a record id.
import { Router, type Request } from "express";
import { auditContextOf } from "@crm/audit";
import { customFieldRoutes, ok, type RecordEntity } from "@crm/contracts";
import { mountRoute, requestBody } from "@crm/service-kit";
import type { CustomFieldService } from "../application/custom-field.service";
import { permanentParam } from "./permanent-param";
import { businessOf } from "./records.router";

function keyParam(req: Request): string {
  return String(req.params["key"] ?? "");
}

export function createCustomFieldsRouter(service: CustomFieldService, entities: readonly RecordEntity[]): Router {
  const router = Router();
  for (const entity of entities) {
    const routes = customFieldRoutes[entity];

    mountRoute(router, routes.listFields, async (req, res) => {
      res.json(ok(await service.list(entity, businessOf(req))));
    });

    mountRoute(router, routes.getField, async (req, res) => {
      res.json(ok(await service.get(entity, businessOf(req), keyParam(req))));
    });

    mountRoute(router, routes.createField, async (req, res) => {
      const businessId = businessOf(req);
      res.status(201).json(ok(await service.create(entity, businessId, requestBody(routes.createField, req), auditContextOf(req))));
    });

    mountRoute(router, routes.updateField, async (req, res) => {
      const businessId = businessOf(req);
      res.json(ok(await service.update(entity, businessId, keyParam(req), requestBody(routes.updateField, req), auditContextOf(req))));
    });

    mountRoute(router, routes.deleteField, async (req, res) => {
      const businessId = businessOf(req);
      res.json(ok(await service.remove(entity, businessId, keyParam(req), permanentParam(req), auditContextOf(req))));
    });
  }
  return router;
}
