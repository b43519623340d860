// Service-to-service: the gateway's cache misses. Mounted under /internal behind the internal token.
import { Router } from "express";
import { z } from "@crm/contracts";
import { isUuid } from "@crm/contracts";
import { parseOrThrow } from "@crm/errors";
import type { AuthStateService } from "../services/auth-state.service";

const resolveKeySchema = z.object({ digest: z.string().regex(/^[0-9a-f]{64}$/) }).strict();

export function internalRouter(authState: AuthStateService): Router {
  const router = Router();

  router.get("/auth/users/:id", async (req, res) => {
    const id = String(req.params.id);
    // Not a UUID: no such user, and nothing worth caching.
    res.json(isUuid(id) ? await authState.resolveUser(id) : { v: 1, userId: id, deleted: true });
  });

  router.post("/auth/api-keys/resolve", async (req, res) => {
    const { digest } = parseOrThrow(resolveKeySchema, req.body ?? {});
    res.json(await authState.resolveApiKey(digest));
  });

  return router;
}
