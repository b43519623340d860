import { Router } from "express";
import { auditContextOf } from "@crm/audit";
import { identityRoutes, ok, okList } from "@crm/contracts";
import { paginationMeta, parsePagination } from "@crm/query-language";
import { mountRoute, principalOf, requestBody } from "@crm/service-kit";
import { apiKeyView } from "../application/identity-views";
import type { ApiKeyService } from "../application/api-key.service";

/** /api/v1/api-key (decisions §5). */
export function apiKeyRouter(keys: ApiKeyService): Router {
  const router = Router();

  mountRoute(router, identityRoutes.createApiKey, async (req, res) => {
    const input = requestBody(identityRoutes.createApiKey, req);
    const { key, record } = await keys.create(principalOf(req), input, auditContextOf(req));
    res.status(201).json(ok({ ...apiKeyView(record), key }));
  });

  mountRoute(router, identityRoutes.listApiKeys, async (req, res) => {
    const page = parsePagination(req.query);
    const { rows, total } = await keys.list(principalOf(req), page);
    res.json(okList(rows.map(apiKeyView), paginationMeta(total, page.page, page.perPage)));
  });

  mountRoute(router, identityRoutes.getApiKey, async (req, res) => {
    res.json(ok(apiKeyView(await keys.get(principalOf(req), String(req.params.id)))));
  });

  mountRoute(router, identityRoutes.updateApiKey, async (req, res) => {
    const input = requestBody(identityRoutes.updateApiKey, req);
    res.json(ok(apiKeyView(await keys.update(principalOf(req), String(req.params.id), input, auditContextOf(req)))));
  });

  mountRoute(router, identityRoutes.revokeApiKeyByBody, async (req, res) => {
    const { id } = requestBody(identityRoutes.revokeApiKeyByBody, req);
    res.json(ok(apiKeyView(await keys.revoke(principalOf(req), id, auditContextOf(req)))));
  });

  mountRoute(router, identityRoutes.revokeApiKey, async (req, res) => {
    res.json(ok(apiKeyView(await keys.revoke(principalOf(req), String(req.params.id), auditContextOf(req)))));
  });

  mountRoute(router, identityRoutes.rollApiKey, async (req, res) => {
    const input = requestBody(identityRoutes.rollApiKey, req);
    const { key, record } = await keys.roll(principalOf(req), String(req.params.id), input, auditContextOf(req));
    res.status(201).json(ok({ ...apiKeyView(record), key }));
  });

  return router;
}
