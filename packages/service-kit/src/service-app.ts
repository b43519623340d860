import express, { type Express, type RequestHandler, type Router } from "express";
import { INTERNAL_CAPABILITIES_PATH } from "@crm/contracts";
import { errorMiddleware, routeNotFound } from "@crm/errors";
import type { Logger } from "@crm/logger";
import { renderMetrics } from "@crm/telemetry";
import { requestContext } from "./request-context";
import { jsonBody } from "./json-body";
import { requireInternalCaller, requireInternalPrincipal } from "./auth";

/** A dependency /readyz checks; `check` rejects when it is unreachable. */
export interface ReadinessCheck {
  name: string;
  check: () => Promise<void>;
}

export interface ServiceAppOptions {
  logger: Logger;
  internalTokenSecret: string;
  readiness: ReadinessCheck[];
  /** API routes, mounted under /api/v1 behind internal-token authentication naming a principal. */
  api: Router;
  /**
   * API routes the gateway forwards without a caller (sign-up, sign-in, refresh): still only reachable
   * with a valid internal token, but no principal is required. Mounted before `api`.
   */
  publicApi?: Router;
  /** Service-to-service routes, mounted under /internal. */
  internal?: Router;
  /** This service's part of the public capabilities (the settings it runs with), for the gateway. */
  capabilities?: object;
  /** Tuning devices turned off (serviceAppDevicesOf, config-fields.ts). */
  devices?: ServiceAppDevices;
}

/** The tuning devices of a service's app (docs/performance.md), each on when omitted. */
export interface ServiceAppDevices {
  /** JSON_BODY_OFF_THE_STREAM: plain JSON bodies read off the stream (D4, json-body.ts). */
  bodiesOffTheStream?: boolean;
  /** LEAN_REQUEST_CONTEXT: `req.log` built on first read (D12, request-context.ts; routes.ts is set by mountChecksInOneLayer). */
  leanRequestContext?: boolean;
}

/**
 * The Express app of an internal service, without listening: request context, health endpoints,
 * JSON parsing with catalogue errors, internal-token authentication, routes, 404 and the error envelope.
 */
export function createServiceApp(options: ServiceAppOptions): Express {
  const app = express();
  app.disable("x-powered-by");
  // Express's own weak ETags (a hash of every JSON answer, lists included) are off: the only entity
  // tags are the strong ones a route sets itself (crm-records' records, extensions §E2.3), which
  // answer If-None-Match themselves.
  app.set("etag", false);
  app.set("query parser", "simple");
  app.use(requestContext(options.logger, { lazyLog: options.devices?.leanRequestContext }));

  app.get("/healthz", (_req, res) => {
    res.json({ status: "ok" });
  });
  app.get("/readyz", readinessHandler(options.readiness));
  // Services listen on loopback (or a private network) only: Prometheus scrapes them there.
  app.get("/metrics", metricsHandler());

  app.use(jsonBody(options.devices?.bodiesOffTheStream));
  if (options.capabilities) {
    const body = JSON.stringify(options.capabilities);
    app.get(INTERNAL_CAPABILITIES_PATH, requireInternalCaller(options.internalTokenSecret), (_req, res) => {
      res.type("application/json").send(body);
    });
  }
  if (options.internal) app.use("/internal", requireInternalCaller(options.internalTokenSecret), options.internal);
  if (options.publicApi) app.use("/api/v1", requireInternalCaller(options.internalTokenSecret), options.publicApi);
  app.use("/api/v1", requireInternalPrincipal(options.internalTokenSecret), options.api);
  app.use(routeNotFound);
  app.use(errorMiddleware((req) => req.log ?? options.logger));
  return app;
}

/** `GET /metrics`: this process's metrics in Prometheus's text format (every service of it, embedded). */
export function metricsHandler(): RequestHandler {
  return async (_req, res) => {
    const { contentType, body } = await renderMetrics();
    res.setHeader("Cache-Control", "no-store");
    res.type(contentType).send(body);
  };
}

export interface ReadinessOptions {
  /**
   * Whether the answer names each dependency and its state (`checks`); default yes (a service's port is
   * private). The gateway's public port answers with the bare status: its dependencies are its operator's business.
   */
  detail?: boolean;
  /** Where failed checks are logged when the request has no logger of its own (an app without requestContext). */
  logger?: Logger;
  /** A check round is reused this long (ms), by every request meanwhile: probes cost one round per period, whatever their rate. */
  reuseMs?: number;
}

type ReadinessRound = ReadonlyArray<readonly [string, "ok" | "unavailable"]>;

/**
 * `GET /readyz`: 200 when every dependency answers within 2 s, else 503 (`{status}`, and with `detail`
 * the state of each dependency by name). Concurrent requests share one round of checks, and a round
 * is reused for `reuseMs` (default 1 s), so a flood of probes cannot multiply the dependencies' work.
 */
export function readinessHandler(checks: readonly ReadinessCheck[], options: ReadinessOptions = {}): RequestHandler {
  const reuseMs = options.reuseMs ?? 1000;
  let latest: { startedAt: number; round: Promise<ReadinessRound> } | undefined;
  const runRound = (log: Logger | undefined): Promise<ReadinessRound> =>
    Promise.all(
      checks.map(async ({ name, check }) => {
        try {
          await withTimeout(check(), 2000);
          return [name, "ok"] as const;
        } catch (err) {
          log?.warn({ err, dependency: name }, "readiness check failed");
          return [name, "unavailable"] as const;
        }
      }),
    );
  return async (req, res) => {
    const now = Date.now();
    if (!latest || now - latest.startedAt >= reuseMs) latest = { startedAt: now, round: runRound(req.log ?? options.logger) };
    const results = await latest.round;
    const ready = results.every(([, state]) => state === "ok");
    const status = ready ? "ready" : "not ready";
    res.setHeader("Cache-Control", "no-store");
    res.status(ready ? 200 : 503).json(options.detail === false ? { status } : { status, checks: Object.fromEntries(results) });
  };
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms`)), ms);
    promise.then(
      (v) => {
        clearTimeout(timer);
        resolve(v);
      },
      (e) => {
        clearTimeout(timer);
        reject(e);
      },
    );
  });
}
