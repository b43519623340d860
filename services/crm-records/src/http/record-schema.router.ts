// GET /api/v1/{entity}/schema (extensions §E4), as declared in @crm/contracts (record-schema.routes.ts).
// Mounted before the records' routes, so `/{entity}/schema` is never read as a record id.
import { Router } from "express";
import { ok, recordSchemaRoutes, type RecordEntity } from "@crm/contracts";
import { mountRoute } from "@crm/service-kit";
import { type CustomFieldCache, customFieldsOf } from "../application/custom-field-cache";
import { recordJsonSchema } from "../domain/record-json-schema";
import { businessOf } from "./records.router";

export function recordSchemaRouter(cache: CustomFieldCache, entities: readonly RecordEntity[]): Router {
  const router = Router();
  for (const entity of entities) {
    mountRoute(router, recordSchemaRoutes[entity].getSchema, async (req, res) => {
      const business = await customFieldsOf(cache, businessOf(req));
      res.json(ok(recordJsonSchema(entity, business.rules)));
    });
  }
  return router;
}
