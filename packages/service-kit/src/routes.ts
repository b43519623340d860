// A service mounts its routes from their declarations in @crm/contracts: the path and the permission
// the gateway checks are the ones the service checks again, never a second copy of them.
import type { RequestHandler, Router } from "express";
import { expressPath, type Route } from "@crm/contracts";
import { requirePermission } from "./auth";

/** Mounts `handlers` on `router` at the declared method and path, behind the declared permission. */
export function mountRoute(router: Router, route: Route, ...handlers: RequestHandler[]): void {
  const guards = route.permission ? [requirePermission(route.permission)] : [];
  const method = route.method.toLowerCase() as Lowercase<Route["method"]>;
  router[method](expressPath(route.path), ...guards, ...handlers);
}
