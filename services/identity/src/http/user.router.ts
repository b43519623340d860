import { Router } from "express";
import { ok, okList, userCreateSchema, userUpdateSchema } from "@crm/contracts";
import { parseOrThrow } from "@crm/errors";
import { paginationMeta, parsePagination } from "@crm/query-language";
import { principalOf, requirePermission } from "@crm/service-kit";
import { userView } from "./identity.presenter";
import type { UserService } from "../application/user.service";

/** /api/v1/user: the users of the caller's business. */
export function userRouter(users: UserService): Router {
  const router = Router();

  router.get("/user", requirePermission("users.read"), async (req, res) => {
    const page = parsePagination(req.query);
    const { rows, total } = await users.list(principalOf(req), page);
    res.json(okList(rows.map(userView), paginationMeta(total, page.page, page.perPage)));
  });

  router.post("/user", requirePermission("users.create"), async (req, res) => {
    const input = parseOrThrow(userCreateSchema, req.body ?? {});
    res.status(201).json(ok(userView(await users.create(principalOf(req), input))));
  });

  router.get("/user/:id", requirePermission("users.read"), async (req, res) => {
    res.json(ok(userView(await users.get(principalOf(req), String(req.params.id)))));
  });

  const update = requirePermission("users.update");
  router.patch("/user/:id", update, async (req, res) => {
    const input = parseOrThrow(userUpdateSchema, req.body ?? {});
    res.json(ok(userView(await users.update(principalOf(req), String(req.params.id), input))));
  });
  router.put("/user/:id", update, async (req, res) => {
    const input = parseOrThrow(userUpdateSchema, req.body ?? {});
    res.json(ok(userView(await users.update(principalOf(req), String(req.params.id), input))));
  });

  router.delete("/user/:id", requirePermission("users.delete"), async (req, res) => {
    res.json(ok(userView(await users.delete(principalOf(req), String(req.params.id)))));
  });

  return router;
}
