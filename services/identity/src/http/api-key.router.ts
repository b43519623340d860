import { Router } from "express";
import { apiKeyCreateSchema, apiKeyRevokeSchema, apiKeyRollSchema, ok, okList } from "@crm/contracts";
import { parseOrThrow } from "@crm/errors";
import { paginationMeta, parsePagination } from "@crm/query-language";
import { principalOf, requirePermission } from "@crm/service-kit";
import { apiKeyView } from "./identity.presenter";
import type { ApiKeyService } from "../application/api-key.service";

/** /api/v1/api-key (decisions §5). */
export function apiKeyRouter(keys: ApiKeyService): Router {
  const router = Router();

  router.post("/api-key", requirePermission("apiKeys.create"), async (req, res) => {
    const input = parseOrThrow(apiKeyCreateSchema, req.body ?? {});
    const { key, record } = await keys.create(principalOf(req), input);
    res.status(201).json(ok({ ...apiKeyView(record), key }));
  });

  router.get("/api-key", requirePermission("apiKeys.read"), async (req, res) => {
    const page = parsePagination(req.query);
    const { rows, total } = await keys.list(principalOf(req), page);
    res.json(okList(rows.map(apiKeyView), paginationMeta(total, page.page, page.perPage)));
  });

  router.get("/api-key/:id", requirePermission("apiKeys.read"), async (req, res) => {
    res.json(ok(apiKeyView(await keys.get(principalOf(req), String(req.params.id)))));
  });

  router.delete("/api-key", requirePermission("apiKeys.delete"), async (req, res) => {
    const { id } = parseOrThrow(apiKeyRevokeSchema, req.body ?? {});
    res.json(ok(apiKeyView(await keys.revoke(principalOf(req), id))));
  });

  router.delete("/api-key/:id", requirePermission("apiKeys.delete"), async (req, res) => {
    res.json(ok(apiKeyView(await keys.revoke(principalOf(req), String(req.params.id)))));
  });

  router.post("/api-key/:id/roll", requirePermission("apiKeys.create"), async (req, res) => {
    const input = parseOrThrow(apiKeyRollSchema, req.body ?? {});
    const { key, record } = await keys.roll(principalOf(req), String(req.params.id), input);
    res.status(201).json(ok({ ...apiKeyView(record), key }));
  });

  return router;
}
