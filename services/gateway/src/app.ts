import express, { type Express, type RequestHandler } from "express";
import type { Principal } from "@crm/contracts";
import { errorMiddleware, routeNotFound } from "@crm/errors";
import type { Logger } from "@crm/logger";
import { readinessHandler, requestContext, type ReadinessCheck } from "@crm/service-kit";
import { API_PREFIX, matchRoute, type RouteMatch } from "./http/route-table";
import { rawJsonBody } from "./http/raw-body";
import type { Forwarder, UpstreamResponse } from "./http/forwarder";
import type { IdempotencyStore } from "./http/idempotency";
import { publicRouter, type PublicDocuments } from "./public/public-router";

/** The edge's security stages (CORS, authentication, rate limit, permission), built in ./security. */
export interface Security {
  /** Before routing: CORS, preflights, `Origin: null`. */
  edge: RequestHandler[];
  /** After routing (`res.locals.route`): authentication -> `res.locals.principal`, rate limit, permission. */
  guard: RequestHandler[];
  close(): Promise<void>;
}

export interface GatewayDeps {
  logger: Logger;
  security: Security;
  forwarder: Forwarder;
  idempotency: IdempotencyStore;
  documents: PublicDocuments;
  readiness: ReadinessCheck[];
  trustProxyHops: number;
}

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace Express {
    interface Locals {
      /** The matched route (undefined for unknown routes), set before the security guard runs. */
      route?: RouteMatch;
      /** The authenticated caller, set by the security guard. */
      principal?: Principal;
    }
  }
}

export function createApp(deps: GatewayDeps): Express {
  const app = express();
  app.disable("x-powered-by");
  app.set("etag", false);
  app.set("query parser", "simple");
  app.set("trust proxy", deps.trustProxyHops);

  app.use(requestContext(deps.logger));
  app.get("/healthz", (_req, res) => void res.json({ status: "ok" }));
  app.get("/readyz", readinessHandler(deps.readiness));

  app.use(deps.security.edge);
  app.use((req, res, next) => {
    const route = matchRoute(req.method, req.path.length > 1 ? req.path.replace(/\/$/, "") : req.path);
    if (route) res.locals.route = route;
    next();
  });
  app.use(deps.security.guard);
  app.use(API_PREFIX, publicRouter(deps.documents));
  app.use(rawJsonBody);
  app.use(forwardToService(deps));
  app.use(routeNotFound);
  app.use(errorMiddleware((req) => req.log ?? deps.logger));
  return app;
}

function forwardToService({ forwarder, idempotency }: GatewayDeps): RequestHandler {
  return async (req, res, next) => {
    const route = res.locals.route;
    if (!route || route.service === "gateway") return next();
    const principal = res.locals.principal;
    const idempotent = req.method === "POST" && principal ? await idempotency.begin(req, principal.businessId) : undefined;
    if (idempotent && "replay" in idempotent) return send(res, idempotent.replay);
    let upstream: UpstreamResponse;
    try {
      upstream = await forwarder.forward(route.service, req, principal);
    } catch (err) {
      await idempotent?.abandon();
      throw err;
    }
    await idempotent?.proceed(upstream);
    send(res, upstream);
  };
}

function send(res: express.Response, upstream: UpstreamResponse): void {
  res.status(upstream.status);
  for (const [name, value] of Object.entries(upstream.headers)) res.setHeader(name, value);
  if (upstream.body.length === 0) res.end();
  else res.end(upstream.body);
}
