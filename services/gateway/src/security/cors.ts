// CORS at the edge (interface §5 rules 12-14, decisions §7, §8). Runs before routing and
// authentication: `Origin: null` is refused here, and preflights are answered here, so they never
// reach the rate limiter.
import type { RequestHandler, Response } from "express";
import { errors } from "@crm/errors";
import { credentialMode } from "./credentials";

/** The one endpoint that answers `Origin: null` (public and read-only). */
const NULL_ORIGIN_PATH = "/api/v1/capabilities";
const ALLOWED_METHODS = "GET, HEAD, POST, PUT, PATCH, DELETE";
const ALLOWED_HEADERS = "Authorization, Content-Type, X-Api-Key, Idempotency-Key, X-Request-Id";
const EXPOSED_HEADERS = ["X-Request-Id", "X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset", "RateLimit", "RateLimit-Policy", "Retry-After"].join(", ");
const PREFLIGHT_MAX_AGE_S = "600";

function grantAnyOrigin(res: Response): void {
  res.setHeader("Access-Control-Allow-Origin", "*");
}

function grantCredentialed(res: Response, origin: string): void {
  res.setHeader("Access-Control-Allow-Origin", origin);
  res.setHeader("Access-Control-Allow-Credentials", "true");
}

function preflight(res: Response): void {
  res.setHeader("Access-Control-Allow-Methods", ALLOWED_METHODS);
  res.setHeader("Access-Control-Allow-Headers", ALLOWED_HEADERS);
  res.setHeader("Access-Control-Max-Age", PREFLIGHT_MAX_AGE_S);
  res.status(204).end();
}

export function corsEdge(allowedOrigins: readonly string[]): RequestHandler {
  const allowed = new Set(allowedOrigins);
  return (req, res, next) => {
    const origin = req.headers.origin;
    if (origin === undefined) return next();
    const requestedMethod = req.headers["access-control-request-method"];
    const isPreflight = req.method === "OPTIONS" && typeof requestedMethod === "string";
    const path = req.path.length > 1 ? req.path.replace(/\/$/, "") : req.path;

    if (origin === "null") {
      const method = isPreflight ? requestedMethod.toUpperCase() : req.method;
      if (path !== NULL_ORIGIN_PATH || (method !== "GET" && method !== "HEAD")) return next(errors.forbidden());
      grantAnyOrigin(res);
      return isPreflight ? preflight(res) : next();
    }

    // The answer depends on Origin and on the credentials sent, so shared caches must key on them.
    res.vary("Origin");
    if (isPreflight) {
      // A preflight carries no credentials: an allowed origin is answered as for a JWT, any other as for an API key.
      if (allowed.has(origin)) grantCredentialed(res, origin);
      else grantAnyOrigin(res);
      return preflight(res);
    }

    const mode = credentialMode(req);
    if (mode === "apiKey") grantAnyOrigin(res);
    else if (allowed.has(origin)) grantCredentialed(res, origin);
    // Without credentials an other origin is served as a preflight would be: readable, never credentialed.
    else if (mode === "none") grantAnyOrigin(res);
    // A JWT or cookie from an origin not on the list gets no CORS grant at all.
    if (res.getHeader("Access-Control-Allow-Origin") !== undefined) res.setHeader("Access-Control-Expose-Headers", EXPOSED_HEADERS);
    next();
  };
}
