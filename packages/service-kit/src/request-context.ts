import { randomUUID } from "node:crypto";
import { IncomingMessage } from "node:http";
import type { Request, RequestHandler, Response } from "express";
import type { Logger } from "@crm/logger";
import type { Principal } from "@crm/contracts";
import { httpMetrics, startSpan, statusClass, traceIdOf, type TraceSpan } from "@crm/telemetry";

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace Express {
    interface Request {
      /** From X-Request-Id when the caller sent a sane one, else generated. */
      requestId: string;
      /** The service logger with this request's id (and trace id, when there is one) on every line. */
      log: Logger;
      /** Set by internal-token authentication on /api routes. */
      principal?: Principal;
      /** This request's server span, when tracing is on. */
      span?: TraceSpan;
    }
  }
}

const SAFE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

export const REQUEST_ID_HEADER = "x-request-id";

/** The route template of a finished request, for metrics and span names: a small, fixed set. */
export type RouteTemplateOf = (req: Request, res: Response) => string;

/** Route label of requests no route handler took (404, or refused before routing). */
export const UNMATCHED_ROUTE = "unmatched";

/**
 * Express's matched route with its mount point: every service mounts its routers under /api/v1 or
 * /internal. (`req.baseUrl` cannot be used: Express resets it when an error leaves the router.)
 */
export const expressRouteTemplate: RouteTemplateOf = (req) => {
  const route = (req as Request & { route?: { path?: unknown } }).route;
  if (!route || typeof route.path !== "string") return UNMATCHED_ROUTE;
  const url = req.originalUrl;
  const mount = url.startsWith("/api/v1/") ? "/api/v1" : url.startsWith("/internal/") ? "/internal" : "";
  return mount + route.path;
};

// What `req.log` is built from, kept on the request until something logs (most requests never do at
// LOG_LEVEL=warn; pino's child() cost ~3 µs a request, for a logger nobody used).
const LOG_PARENT = Symbol("request logger's parent");
const LOG_TRACE_ID = Symbol("request logger's trace id");
const LOG_CHILD = Symbol("request logger");

interface LazyLogRequest extends Request {
  [LOG_PARENT]?: Logger;
  [LOG_TRACE_ID]?: string;
  [LOG_CHILD]?: Logger;
}

/** A request's logger: the service's, with the request's id and, when traced, its trace id on every line. */
function requestLogger(parent: Logger, requestId: string, traceId: string | undefined): Logger {
  return parent.child(traceId ? { requestId, traceId } : { requestId });
}

/** Prototypes of requests that already have the lazy `log` accessor. */
const withLazyLog = new WeakSet<object>();

/**
 * Whether a request's `log` is the lazy accessor of its prototype, installed here on first sight
 * (Express gives each app's requests their own prototype): the child logger is made on first read
 * and kept; a request that never passed requestContext reads undefined, as before; assigning
 * `req.log` still replaces it. Only on Node's requests: a test's plain object has Object.prototype.
 */
function lazyLogOn(proto: object | null): boolean {
  if (!proto) return false;
  if (withLazyLog.has(proto)) return true;
  if (!(proto instanceof IncomingMessage)) return false;
  withLazyLog.add(proto);
  Object.defineProperty(proto, "log", {
    configurable: true,
    get(this: LazyLogRequest): Logger | undefined {
      const built = this[LOG_CHILD];
      if (built) return built;
      const parent = this[LOG_PARENT];
      if (!parent) return undefined;
      const traceId = this[LOG_TRACE_ID];
      const child = requestLogger(parent, this.requestId, traceId);
      this[LOG_CHILD] = child;
      return child;
    },
    set(this: LazyLogRequest, value: Logger) {
      this[LOG_CHILD] = value;
    },
  });
  return true;
}

export interface RequestContextOptions {
  /** Label and span name of a request; Express's matched route by default. */
  routeOf?: RouteTemplateOf;
  /**
   * Whether the caller's `traceparent` continues its trace here (default: yes, for services, whose only
   * caller is the gateway). The gateway trusts a client's only with TRUST_TRACEPARENT: otherwise a
   * client could choose the trace its requests are filed under (docs/security.md, rule 12).
   */
  trustTraceparent?: boolean;
  /**
   * LEAN_REQUEST_CONTEXT (docs/performance.md D12): `req.log` built on first read; false builds it for
   * every request, as pino's documentation does. On when omitted.
   */
  lazyLog?: boolean;
}

/** What a span is started from when the caller's trace is not continued: no traceparent, so a new trace. */
const NO_PARENT: Readonly<Record<string, string>> = Object.freeze({});

/**
 * Request id in, request id out, a per-request logger, one log line per finished request, the HTTP
 * metrics (by route template, method and status class) and, when tracing is on, a server span that is
 * the child of the caller's `traceparent` (when trusted; else the root of a new trace). The service's
 * name is the logger's `service` field. A caller's X-Request-Id is kept only when it is 1 to 128 of
 * `A-Z a-z 0-9 . _ : -`; anything else (longer, spaces, control or non-ASCII characters) is replaced
 * by a new UUID, so a request id is always safe to log, to put in a header and to search for.
 */
export function requestContext(logger: Logger, options: RequestContextOptions = {}): RequestHandler {
  const service = String((logger.bindings() as { service?: unknown }).service ?? "unknown");
  const routeOf = options.routeOf ?? expressRouteTemplate;
  const trustTraceparent = options.trustTraceparent ?? true;
  const lazyLog = options.lazyLog ?? true;
  const metrics = httpMetrics();
  const inFlight = metrics.inFlight.labels(service);
  // One pair of label children per (route, method, status class): found, not hashed, per request.
  const children = new Map<string, { requests: { inc(): void }; duration: { observe(value: number): void } }>();
  const record = (route: string, method: string, status: number, seconds: number) => {
    const cls = statusClass(status);
    const key = `${method} ${route} ${cls}`;
    let child = children.get(key);
    if (!child) {
      child = { requests: metrics.requests.labels(service, route, method, cls), duration: metrics.duration.labels(service, route, method, cls) };
      children.set(key, child);
    }
    child.requests.inc();
    child.duration.observe(seconds);
  };

  return (req, res, next) => {
    const incoming = req.headers[REQUEST_ID_HEADER];
    req.requestId = typeof incoming === "string" && SAFE_REQUEST_ID.test(incoming) ? incoming : randomUUID();
    const span = startSpan(service, req.method, { kind: "server", parent: trustTraceparent ? req.headers : NO_PARENT, attributes: { "http.request.method": req.method } });
    const traceparent = trustTraceparent ? req.headers.traceparent : undefined;
    const traceId = span?.traceId ?? (typeof traceparent === "string" ? traceIdOf(traceparent) : undefined);
    if (lazyLog && lazyLogOn(Object.getPrototypeOf(req))) {
      const lazy = req as LazyLogRequest;
      lazy[LOG_PARENT] = logger;
      lazy[LOG_TRACE_ID] = traceId;
      lazy[LOG_CHILD] = undefined;
    } else {
      req.log = requestLogger(logger, req.requestId, traceId);
    }
    if (span) req.span = span;
    res.setHeader("X-Request-Id", req.requestId);
    inFlight.inc();
    const started = process.hrtime.bigint();
    // A response closes once: a plain listener, without once()'s wrapper per request.
    res.on("close", () => {
      inFlight.dec();
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      const route = routeOf(req, res);
      // A response the client gave up on before its end is not counted as answered.
      if (res.writableFinished) record(route, req.method, res.statusCode, ms / 1000);
      if (span) {
        span.setName(`${req.method} ${route}`);
        span.setAttribute("http.route", route);
        span.setAttribute("http.response.status_code", res.statusCode);
        if (res.statusCode >= 500 || !res.writableFinished) span.fail();
        span.end();
      }
      if (!res.writableFinished) return;
      const failed = res.statusCode >= 500;
      // Built only when it is written (services run at warn in production benchmarks: most requests log nothing).
      if (!logger.isLevelEnabled(failed ? "error" : "info")) return;
      const line = { method: req.method, path: req.path, status: res.statusCode, ms: Math.round(ms * 10) / 10 };
      if (failed) req.log.error(line, "request failed");
      else req.log.info(line, "request");
    });
    if (span) span.run(next);
    else next();
  };
}
