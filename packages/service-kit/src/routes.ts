// A service mounts its routes from their declarations in @crm/contracts: the path and the permission
// the gateway checks are the ones the service checks again, never a second copy of them.
import type { Request, RequestHandler, Router } from "express";
import { expressPath, mayCallRoute, type Route } from "@crm/contracts";
import { errors, parseOrThrow } from "@crm/errors";
import type { ZodType } from "zod";
import { principalOf } from "./auth";

let checksInOneLayer = true;

/**
 * LEAN_REQUEST_CONTEXT (docs/performance.md D12), set by a service's start before it builds its routers:
 * false mounts every route's checks as middleware of their own, Express's usual chain. On until set.
 */
export function mountChecksInOneLayer(on: boolean): void {
  checksInOneLayer = on;
}

/**
 * Mounts `handlers` on `router` at the declared method and path, behind the declared permission (or,
 * on a route open to self, the signed-in user its `{id}` names: mayCallRoute) and, when the route
 * declares the query parameters it takes, the refusal of any other.
 */
export function mountRoute(router: Router, route: Route, ...handlers: RequestHandler[]): void {
  const method = route.method.toLowerCase() as Lowercase<Route["method"]>;
  const query = route.query;
  const [only] = handlers;
  const allowed = (req: Request) =>
    mayCallRoute(route, principalOf(req), () => {
      const id = req.params.id;
      return typeof id === "string" ? id : undefined;
    });
  if (checksInOneLayer && route.permission && only && handlers.length === 1) {
    // The checks and the handler as one layer: one pass through Express's route dispatch less per request.
    router[method](expressPath(route.path), (req, res, next) => {
      if (!allowed(req)) throw errors.insufficientPermissions();
      if (query) refuseUnknownParameters(req, query);
      return only(req, res, next);
    });
    return;
  }
  const guards: RequestHandler[] = [];
  if (route.permission) {
    guards.push((req, _res, next) => {
      if (!allowed(req)) throw errors.insufficientPermissions();
      next();
    });
  }
  if (query) {
    guards.push((req, _res, next) => {
      refuseUnknownParameters(req, query);
      next();
    });
  }
  router[method](expressPath(route.path), ...guards, ...handlers);
}

/** 400001 with one detail per query parameter the route does not take, in the order sent. */
function refuseUnknownParameters(req: Request, known: readonly string[]): void {
  let unknown: string[] | undefined;
  for (const name of Object.keys(req.query)) if (!known.includes(name)) (unknown ??= []).push(name);
  if (!unknown) return;
  const takes = known.join(", ");
  throw errors.validationFailed(unknown.map((name) => ({ path: name, message: `Unknown query parameter "${name.slice(0, 60)}"; this endpoint takes ${takes}` })));
}

/** The JSON body schema a route declares, as its type. */
type BodySchemaOf<R> = R extends { body: { schema: infer S } } ? S : never;

/**
 * The request body, validated by the schema the route declares (400001 naming each bad field); no body
 * counts as {}. The schema is said once, in the declaration the OpenAPI document shows.
 */
export function requestBody<R extends Route & { body: object }>(route: R, req: Request): BodySchemaOf<R> extends ZodType<infer T> ? T : never {
  return parseOrThrow(route.body.schema, req.body ?? {}) as BodySchemaOf<R> extends ZodType<infer T> ? T : never;
}
