import express, { type Express, type Request, type RequestHandler } from "express";
import type { Principal } from "@crm/contracts";
import { ErrorCodes, errorMiddleware, isAppError, routeNotFound } from "@crm/errors";
import type { Logger } from "@crm/logger";
import { expressRouteTemplate, readinessHandler, requestContext, type ReadinessCheck, type RouteTemplateOf } from "@crm/service-kit";
import { gatewayMetrics, startSpan, statusClass, type TraceSpan } from "@crm/telemetry";
import { API_PREFIX, matchRoute, type RouteMatch } from "./http/route-table";
import { rawJsonBody } from "./http/raw-body";
import { forwardWithoutRouter } from "./http/router-bypass";
import { mayHaveRun } from "./http/upstream-pool";
import type { Forwarder, UpstreamResponse } from "./http/forwarder";
import type { IdempotencyStore } from "./http/idempotency";
import { publicRouter, type PublicDocuments } from "./public/public-router";
import { auditLogRouter } from "./audit/audit-log.router";
import { webhookFilterHeaders } from "./webhooks/filter-custom-keys";
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
  /** FORWARD_WITHOUT_ROUTER: forwarded requests skip Express's router (D2, router-bypass.ts); on when omitted. */
  forwardWithoutRouter?: boolean;
  /** LEAN_REQUEST_CONTEXT: request loggers built on first use (D12, request-context.ts); on when omitted. */
  leanRequestContext?: boolean;
  /** Seals the audit log's cursors (audit-log.router.ts). */
  internalTokenSecret: string;
}

declare global {
  // biome-ignore lint/suspicious/noRedeclare: augments Express's own namespace (declaration merging).
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
  app.set("trust proxy", deps.trustedProxies.length > 0 ? [...deps.trustedProxies] : false);

  const context = requestContext(deps.logger, { routeOf: gatewayRouteTemplate, trustTraceparent: deps.trustTraceparent, lazyLog: deps.leanRequestContext });
  app.use(context);
  // Probes: bare status, not rate limited, not counted (docs/security.md, rule 12).
  app.get("/healthz", (_req, res) => void res.json({ status: "ok" }));
  app.get("/readyz", readinessHandler(deps.readiness, { detail: false }));

  const upstream = callService(deps.forwarder, deps.trustTraceparent);
  const markRoute: RequestHandler = (req, res, next) => {
    const route = routeOf(req);
    if (route) res.locals.route = route;
    if (!isPublicDocument(req, route)) res.setHeader("Cache-Control", NO_STORE);
    next();
  };
  const stages = [...deps.security.edge, markRoute, ...deps.security.guard];
  app.use(stages);
  // The route table says who answers: a service (the body is read, checked and forwarded) or the
  // gateway itself (its public documents; anything else is 404000).
  const forward = [...rawJsonBody, forwardToService(deps, upstream)];
  const forwarded = express.Router().use(forward);
  app.use((req, res, next) => (isForwarded(res.locals.route) ? forwarded(req, res, next) : next()));
  app.use(API_PREFIX, publicRouter(deps.documents));
  app.use(API_PREFIX, auditLogRouter(deps.forwarder, deps.internalTokenSecret));
  app.use(rawJsonBody);
  app.use(routeNotFound);
  const onError = errorMiddleware((req) => req.log ?? deps.logger);
  app.use(onError);
  if (deps.forwardWithoutRouter !== false) forwardWithoutRouter(app, (req) => isForwarded(routeOf(req)), [context, ...stages, ...forward], onError);
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

function isForwarded(route: RouteMatch | undefined): route is RouteMatch & { service: Exclude<RouteMatch["service"], "gateway"> } {
  return route !== undefined && route.service !== "gateway";
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

type CallService = (
  service: Exclude<RouteMatch["service"], "gateway">,
  req: Request,
  principal: Principal | undefined,
  gatewayHeaders?: Readonly<Record<string, string>>,
) => Promise<UpstreamResponse>;

/** One call of a service, traced and measured; its failures are counted and passed on. */
function callService(forwarder: Forwarder, trustTraceparent: boolean): CallService {
  const metrics = gatewayMetrics();
  return async (service, req, principal, gatewayHeaders) => {
    const span: TraceSpan | undefined = startSpan("gateway", `forward ${service}`, { kind: "client", attributes: { "crm.upstream": service } });
    const started = performance.now();
    let upstream: UpstreamResponse;
    try {
      upstream = await forwarder.forward(service, req, principal, span ? span.headers() : trustTraceparent ? passedTraceHeaders(req) : undefined, gatewayHeaders);
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

function forwardToService({ idempotency, forwarder }: GatewayDeps, call: CallService): RequestHandler {
  const metrics = gatewayMetrics();
  return async (req, res, next) => {
    const route = res.locals.route;
    if (!isForwarded(route)) return next();
    const principal = res.locals.principal;
    const idempotent = req.method === "POST" && principal ? await idempotency.begin(req, principal) : undefined;
    if (idempotent && "replay" in idempotent) {
      metrics.idempotentReplays.inc();
      return send(res, idempotent.replay);
    }
    let upstream: UpstreamResponse;
    let gatewayHeaders: Record<string, string> | undefined;
    try {
      // A webhook filter naming custom fields is checked against the definitions (filter-custom-keys.ts).
      gatewayHeaders = principal ? await webhookFilterHeaders(forwarder, route, req, principal) : undefined;
    } catch (err) {
      await idempotent?.abandon();
      throw err;
    }
    try {
      upstream = await call(route.service, req, principal, gatewayHeaders);
    } catch (err) {
      // No answer came back. One that may have reached the service keeps its key (issue 42), unless the
      // service claims the key itself and answers the retry from that claim.
      await (mayHaveRun(err) && !route.keyClaimedByService ? idempotent?.unanswered() : idempotent?.abandon());
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
