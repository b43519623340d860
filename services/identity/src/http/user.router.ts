import { Router, type RequestHandler } from "express";
import { auditContextOf } from "@crm/audit";
import { identityRoutes, ok, okList } from "@crm/contracts";
import { paginationMeta, parsePagination } from "@crm/query-language";
import { mountRoute, principalOf, requestBody } from "@crm/service-kit";
import { userView } from "../application/identity-views";
import { clientAddress } from "./request-meta";
import type { UserService } from "../application/user.service";

/** /api/v1/user: the users of the caller's business. */
export function userRouter(users: UserService): Router {
  const router = Router();

  mountRoute(router, identityRoutes.listUsers, async (req, res) => {
    const page = parsePagination(req.query);
    const { rows, total } = await users.list(principalOf(req), page);
    res.json(okList(rows.map(userView), paginationMeta(total, page.page, page.perPage)));
  });

  mountRoute(router, identityRoutes.createUser, async (req, res) => {
    const input = requestBody(identityRoutes.createUser, req);
    res.status(201).json(ok(userView(await users.create(principalOf(req), input, auditContextOf(req)))));
  });

  mountRoute(router, identityRoutes.getUser, async (req, res) => {
    res.json(ok(userView(await users.get(principalOf(req), String(req.params.id)))));
  });

  // PATCH (decisions §4) and PUT: the same partial update.
  const update =
    (route: typeof identityRoutes.patchUser | typeof identityRoutes.putUser): RequestHandler =>
    async (req, res) => {
      const input = requestBody(route, req);
      res.json(ok(userView(await users.update(principalOf(req), String(req.params.id), input, clientAddress(req), auditContextOf(req)))));
    };
  mountRoute(router, identityRoutes.patchUser, update(identityRoutes.patchUser));
  mountRoute(router, identityRoutes.putUser, update(identityRoutes.putUser));

  mountRoute(router, identityRoutes.deleteUser, async (req, res) => {
    res.json(ok(userView(await users.delete(principalOf(req), String(req.params.id), auditContextOf(req)))));
  });

  return router;
}
