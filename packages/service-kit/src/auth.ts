import type { Request, RequestHandler } from "express";
import { INTERNAL_TOKEN_HEADER, type Permission, type Principal } from "@crm/contracts";
import { errors } from "@crm/errors";
import { verifyInternalToken } from "./internal-token";

/** Every /api route: a valid internal token that names a principal. */
export function requireInternalPrincipal(secret: string): RequestHandler {
  return (req, _res, next) => {
    const claims = verifyInternalToken(req.get(INTERNAL_TOKEN_HEADER) ?? "", secret);
    if (!claims.principal) throw errors.authenticationRequired();
    req.principal = claims.principal;
    next();
  };
}

/** Every /internal route: a valid internal token (service-to-service, no principal needed). */
export function requireInternalCaller(secret: string): RequestHandler {
  return (req, _res, next) => {
    const claims = verifyInternalToken(req.get(INTERNAL_TOKEN_HEADER) ?? "", secret);
    if (claims.principal) req.principal = claims.principal;
    next();
  };
}

/** The principal of an authenticated /api request. */
export function principalOf(req: Request): Principal {
  if (!req.principal) throw errors.authenticationRequired();
  return req.principal;
}

/** Defence in depth: the gateway checked too, but a service never trusts that alone. */
export function hasPermission(principal: Principal, permission: Permission): boolean {
  return principal.permissions.includes(permission);
}

export function requirePermission(permission: Permission): RequestHandler {
  return (req, _res, next) => {
    if (!hasPermission(principalOf(req), permission)) throw errors.insufficientPermissions();
    next();
  };
}
