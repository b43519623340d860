// Service-to-service: the gateway's cache misses. Mounted under /internal behind the internal token.
import { Router } from "express";
import { ACCESS_TOKEN_RESOLVE_MAX, API_KEY_USE_REPORT_MAX } from "@crm/auth-cache";
import { z } from "@crm/contracts";
import { isUuid } from "@crm/contracts";
import { parseOrThrow } from "@crm/errors";
import type { ApiKeyService } from "../application/api-key.service";
import type { AuthStateService } from "../application/auth-state.service";

const resolveKeySchema = z.object({ digest: z.string().regex(/^[0-9a-f]{64}$/) }).strict();
const id = z.string().min(1).max(64);
const resolveAccessTokensSchema = z
  .object({ tokens: z.array(z.object({ jti: id, sessionId: id, userId: id, exp: z.number().int().positive() }).strict()).max(ACCESS_TOKEN_RESOLVE_MAX) })
  .strict();
// Not strict about a use's members: a gateway of a later release may report more (expand, then contract).
const keyUseSchema = z
  .object({ uses: z.array(z.object({ id: z.string().max(64), at: z.iso.datetime({ offset: true }), ip: z.string().max(64).optional() })).max(API_KEY_USE_REPORT_MAX) })
  .strict();

export function internalRouter(authState: AuthStateService, keys: ApiKeyService): Router {
  const router = Router();

  router.get("/auth/users/:id", async (req, res) => {
    const id = String(req.params.id);
    // Not a UUID: no such user, and nothing worth caching.
    res.json(isUuid(id) ? await authState.resolveUser(id) : { v: 1, userId: id, deleted: true });
  });

  router.post("/auth/access-tokens/resolve", async (req, res) => {
    const { tokens } = parseOrThrow(resolveAccessTokensSchema, req.body ?? {});
    res.json({ verdicts: await authState.resolveAccessTokens(tokens) });
  });

  router.post("/auth/api-keys/resolve", async (req, res) => {
    const { digest } = parseOrThrow(resolveKeySchema, req.body ?? {});
    res.json(await authState.resolveApiKey(digest));
  });

  router.post("/auth/api-keys/used", async (req, res) => {
    const { uses } = parseOrThrow(keyUseSchema, req.body ?? {});
    await keys.recordUse(uses.map((use) => ({ id: use.id, at: new Date(use.at), ip: use.ip })));
    res.status(204).end();
  });

  return router;
}
