import type { IncomingMessage, ServerResponse } from "node:http";
import express, { type ErrorRequestHandler, type Express, type Request, type RequestHandler, type Response } from "express";
import type { Principal } from "@crm/contracts";
import { ErrorCodes, errorMiddleware, errors, isAppError, routeNotFound } from "@crm/errors";
import type { Logger } from "@crm/logger";
import { expressRouteTemplate, readinessHandler, requestContext, type ReadinessCheck, type RouteTemplateOf } from "@crm/service-kit";
import { gatewayMetrics, startSpan, statusClass, type TraceSpan } from "@crm/telemetry";
import { API_PREFIX, matchRoute, type RouteMatch } from "./http/route-table";
import { rawJsonBody } from "./http/raw-body";
import type { Forwarder, UpstreamResponse } from "./http/forwarder";
import type { IdempotencyStore } from "./http/idempotency";
import { publicRouter, type PublicDocuments } from "./public/public-router";
import type { Security } from "./security";

export interface GatewayDeps {
  logger: Logger;
  security: Security;
  forwarder: Forwarder;
  idempotency: IdempotencyStore;
  documents: PublicDocuments;
  /** What /readyz checks; the public port answers only the overall status (the metrics port names each). */
  readiness: ReadinessCheck[];
  /** TRUSTED_PROXIES, normalised CIDR blocks: whose X-Forwarded-For gives req.ip (Express's `trust proxy`). */
  trustedProxies: readonly string[];
  /** TRUST_TRACEPARENT: continue a client's `traceparent` rather than start a new trace. */
  trustTraceparent: boolean;
}

declare global {
  // biome-ignore lint/suspicious/noRedeclare: augments Express's own namespace (declaration merging).
  namespace Express {
    interface Locals {
      /** The matched route (undefined for unknown routes), set before the security guard runs. */
      route?: RouteMatch;
      /** The authenticated caller, set by the security guard. */
      principal?: Principal;
      /** A read forwarded before its authentication ended, as `principal` (see `forwardEarly`). */
      early?: { principal: Principal; answer: Promise<UpstreamResponse> };
    }
  }
}

export function createApp(deps: GatewayDeps): Express {
  const app = express();
  app.disable("x-powered-by");
  app.set("etag", false);
  app.set("query parser", "simple");
  app.set("trust proxy", deps.trustedProxies.length > 0 ? [...deps.trustedProxies] : false);

  const context = requestContext(deps.logger, { routeOf: gatewayRouteTemplate, trustTraceparent: deps.trustTraceparent });
  app.use(context);
  // Probes: bare status, not rate limited, not counted (docs/security.md, rule 12).
  app.get("/healthz", (_req, res) => void res.json({ status: "ok" }));
  app.get("/readyz", readinessHandler(deps.readiness, { detail: false }));

  // The stages every request passes, in order, as one Express layer: the router's own work per layer
  // (path match, prefix trim, its next()) was ~5% of the gateway's CPU under load with a layer each.
  const upstream = callService(deps.forwarder, deps.trustTraceparent);
  const forward = inOrder([...rawJsonBody, forwardToService(deps, upstream)]);
  const stages = inOrder([
    ...deps.security.edge,
    (req, res, next) => {
      const route = routeOf(req);
      if (route) res.locals.route = route;
      if (!isPublicDocument(req, route)) res.setHeader("Cache-Control", NO_STORE);
      next();
    },
    forwardEarly(deps.security, upstream),
    ...deps.security.guard,
    // Forwarded routes go straight on to the service; the rest to the gateway's own router below.
    (req, res, next) => (res.locals.route && res.locals.route.service !== "gateway" ? forward(req, res, next) : next()),
  ]);
  app.use(stages);
  app.use(API_PREFIX, publicRouter(deps.documents));
  app.use(rawJsonBody);
  app.use(routeNotFound);
  const onError = errorMiddleware((req) => req.log ?? deps.logger);
  app.use(onError);
  forwardWithoutRouter(app, inOrder([context, stages]), onError);
  return app;
}

/**
 * Extensions §E10: no shared cache may keep what a caller's credentials show, nor the tokens sign-in
 * and refresh hand out; every answer of the API carries this but the public documents' (capabilities,
 * openapi.json, event types, docs), which say their own caching. Set before the guard, so refusals
 * carry it too; a service's own Cache-Control never replaces it (send).
 */
const NO_STORE = "no-store";

function isPublicDocument(req: Request, route: RouteMatch | undefined): boolean {
  return route?.public === true && (req.method === "GET" || req.method === "HEAD");
}

function routeOf(req: Request): RouteMatch | undefined {
  return matchRoute(req.method, req.path.length > 1 ? req.path.replace(/\/$/, "") : req.path);
}

type Handle = (req: IncomingMessage, res: ServerResponse, callback?: (err?: unknown) => void) => void;

/**
 * Forwarded requests, nearly all of the gateway's traffic, skip Express's router: for them it only
 * walked its layers to run the request context and then the stages (parseurl, a path match per
 * layer, its next(), a final handler built per request: ~5% of the gateway's busy samples under
 * load, with their garbage). They get what Express's `app.handle` sets up (the circular references
 * and the prototypes behind req.path, req.ip, res.status...) and what the router sets before the
 * first layer, then run exactly the layers the router would run for them, in the same order, and a
 * failure goes to the same error middleware. Everything else (health, readiness, the public
 * documents, unknown routes, preflights) and an app mounted inside another go through Express.
 */
function forwardWithoutRouter(app: Express, chain: RequestHandler, onError: ErrorRequestHandler): void {
  const internals = app as unknown as { handle: Handle };
  const routed: Handle = internals.handle.bind(app);
  internals.handle = (incoming, outgoing, callback) => {
    if (callback !== undefined) return routed(incoming, outgoing, callback);
    const req = incoming as Request;
    const res = outgoing as Response;
    req.res = res;
    res.req = req;
    Object.setPrototypeOf(req, app.request);
    Object.setPrototypeOf(res, app.response);
    if (!res.locals) res.locals = Object.create(null);
    const route = routeOf(req);
    // Express's own handle sets the same up again (harmlessly) and routes the request.
    if (!route || route.service === "gateway") return routed(req, res);
    req.baseUrl = "";
    req.originalUrl = req.url;
    req.params = {};
    const failed = (err: unknown) => {
      try {
        onError(err, req, res, (passed: unknown) => setImmediate(finalHandler, app, req, res, passed));
      } catch (thrown) {
        setImmediate(finalHandler, app, req, res, thrown);
      }
    };
    // The forward stage always answers or fails; a stage that went on past it would, under Express,
    // have reached the layers after it, which answer a forwarded path with 404000.
    chain(req, res, (err?: unknown) => failed(err ?? errors.routeNotFound()));
  };
}

/**
 * Express's final handler for what the error middleware passes on, which is only an error after the
 * answer has started (the envelope cannot be sent): logged as Express logs it, the connection cut.
 */
function finalHandler(app: Express, req: Request, res: Response, err: unknown): void {
  if (err && app.get("env") !== "test") console.error(err instanceof Error ? (err.stack ?? String(err)) : String(err));
  if (res.headersSent) req.socket?.destroy();
  else res.status(500).end();
}

/**
 * Handlers run one after the other as Express would run them as layers of their own: `next()` goes
 * on, `next(err)` leaves for the error handlers, and a rejected promise is `next(err)` (Express 5).
 */
export function inOrder(handlers: readonly RequestHandler[]): RequestHandler {
  return (req, res, next) => {
    let i = 0;
    const step = (err?: unknown) => {
      if (err !== undefined && err !== null) return next(err);
      const handler = handlers[i++];
      if (!handler) return next();
      try {
        const returned: unknown = handler(req, res, step);
        if (returned instanceof Promise) returned.catch((error: unknown) => next(error ?? new Error("Rejected promise")));
      } catch (error) {
        next(error);
      }
    };
    step();
  };
}

/** Route templates of the route table ("/api/v1/client/:id"), one string per route, made once. */
const routeTemplates = new WeakMap<RouteMatch, string>();
const gatewayRouteTemplate: RouteTemplateOf = (req, res) => {
  const route = res.locals.route;
  if (!route) return expressRouteTemplate(req, res);
  let template = routeTemplates.get(route);
  if (template === undefined) routeTemplates.set(route, (template = API_PREFIX + route.name.slice(route.name.indexOf(" ") + 1)));
  return template;
};

type CallService = (service: Exclude<RouteMatch["service"], "gateway">, req: Request, principal: Principal | undefined) => Promise<UpstreamResponse>;

/** One call of a service, traced and measured; its failures are counted and passed on. */
function callService(forwarder: Forwarder, trustTraceparent: boolean): CallService {
  const metrics = gatewayMetrics();
  return async (service, req, principal) => {
    const span: TraceSpan | undefined = startSpan("gateway", `forward ${service}`, { kind: "client", attributes: { "crm.upstream": service } });
    const started = performance.now();
    let upstream: UpstreamResponse;
    try {
      upstream = await forwarder.forward(service, req, principal, span ? span.headers() : trustTraceparent ? passedTraceHeaders(req) : undefined);
    } catch (err) {
      metrics.upstreamErrors.labels(service, upstreamErrorReason(err)).inc();
      span?.fail();
      span?.end();
      throw err;
    }
    metrics.upstreamDuration.labels(service, statusClass(upstream.status)).observe((performance.now() - started) / 1000);
    if (span) {
      span.setAttribute("http.response.status_code", upstream.status);
      if (upstream.status >= 500) span.fail();
      span.end();
    }
    return upstream;
  };
}

/**
 * A read (GET) whose caller is most likely the one its token was last authenticated as goes to the
 * service at once, beside its authentication (the auth-state read and the rate-limit count, one
 * Redis round trip), instead of after it: that round trip was ~0.4 ms of the ~1.4 ms the hop added at
 * half saturation. Nothing is decided by the guess: the guard authenticates the request as before,
 * and the early answer is relayed only when the request ends authenticated as that very principal
 * (the same object: the authenticator builds a new one when the caller's stored state changes).
 * Otherwise it is dropped unread by anyone, and a request that is allowed after all is forwarded
 * again as whoever it was authenticated as. Only reads: a service does nothing for a GET but answer,
 * so a dropped answer cost it that work and changed nothing. No guess for a token refused since
 * (sign-out, deletion), a permission the principal lacks, or a bucket out of budget at its last count.
 */
function forwardEarly(security: Security, call: CallService): RequestHandler {
  return (req, res, next) => {
    const route = res.locals.route;
    if (req.method === "GET" && route && route.service !== "gateway") {
      const principal = security.likelyPrincipal(req);
      if (principal) {
        const answer = call(route.service, req, principal);
        // Awaited only if the guess holds; a dropped answer's failure must not surface as unhandled.
        answer.catch(() => undefined);
        res.locals.early = { principal, answer };
      }
    }
    next();
  };
}

function forwardToService({ idempotency }: GatewayDeps, call: CallService): RequestHandler {
  const metrics = gatewayMetrics();
  return async (req, res, next) => {
    const route = res.locals.route;
    if (!route || route.service === "gateway") return next();
    const principal = res.locals.principal;
    const early = res.locals.early;
    if (early && early.principal === principal) return send(res, await early.answer);
    const idempotent = req.method === "POST" && principal ? await idempotency.begin(req, principal) : undefined;
    if (idempotent && "replay" in idempotent) {
      metrics.idempotentReplays.inc();
      return send(res, idempotent.replay);
    }
    let upstream: UpstreamResponse;
    try {
      upstream = await call(route.service, req, principal);
    } catch (err) {
      await idempotent?.abandon();
      throw err;
    }
    await idempotent?.proceed(upstream);
    send(res, upstream);
  };
}

function upstreamErrorReason(err: unknown): string {
  if (isAppError(err) && err.code === ErrorCodes.unavailable) return "unavailable";
  if (isAppError(err) && err.code === ErrorCodes.internal) return "too_large";
  return "other";
}

/**
 * Tracing off, TRUST_TRACEPARENT on: the caller's own W3C headers are passed on as they came, so a
 * trace started upstream of the gateway still reaches the services' logs.
 */
function passedTraceHeaders(req: express.Request): Record<string, string> | undefined {
  const { traceparent, tracestate } = req.headers;
  if (typeof traceparent !== "string") return undefined;
  return typeof tracestate === "string" ? { traceparent, tracestate } : { traceparent };
}

function send(res: express.Response, upstream: UpstreamResponse): void {
  res.status(upstream.status);
  const { headers } = upstream;
  for (const name in headers) if (name !== "cache-control" || !res.hasHeader(name)) res.setHeader(name, headers[name]!);
  if (upstream.body.length === 0) res.end();
  else res.end(upstream.body);
}
