import { normalizeAllowedIp } from "@crm/auth-cache";
import { loadOrCreateSecret } from "@crm/config";
import { openKvStore } from "@crm/kv-store";
import { createLogger } from "@crm/logger";
import express from "express";
import type { Logger } from "@crm/logger";
import {
  listen,
  metricsHandler,
  mountChecksInOneLayer,
  readinessHandler,
  startService,
  startServiceTracing,
  type ListeningServer,
  type ReadinessCheck,
  type RunningService,
} from "@crm/service-kit";
import { createApp } from "./app";
import type { GatewayConfig } from "./config";
import { Forwarder, type ForwarderOptions } from "./http/forwarder";
import { IdempotencyStore } from "./http/idempotency";
import { CapabilitiesSource } from "./public/capabilities";
import { buildOpenApiDocument } from "./public/openapi";
import { docsHtml } from "./public/docs-page";
import { openApiRegistrations } from "./public/registrations";
import { createSecurity } from "./security";

/** A running gateway; `metricsUrl` when METRICS_PORT is set. */
export interface GatewayService extends RunningService {
  /** The address it is bound to (`host:port`): `url` says where to call it, this says who can. */
  boundTo: string;
  metricsUrl?: string;
}

/** What the single process hands the gateway beside its configuration. */
export interface GatewayStartOptions {
  /** Services of this process, forwarded to by calling their app instead of over loopback HTTP. */
  inProcess?: ForwarderOptions["inProcess"];
}

export async function start(config: Readonly<GatewayConfig>, options: GatewayStartOptions = {}): Promise<GatewayService> {
  const logger = createLogger({ service: "gateway", level: config.LOG_LEVEL, ...startServiceTracing(config, "gateway") });
  const jwtSecret = loadOrCreateSecret(config.JWT_SECRET, config.DATA_DIR, "jwt");
  const internalTokenSecret = loadOrCreateSecret(config.INTERNAL_TOKEN_SECRET, config.DATA_DIR, "internalToken");
  const idempotencyKey = loadOrCreateSecret(config.IDEMPOTENCY_ENCRYPTION_KEY, config.DATA_DIR, "idempotencyKey");
  return startService("gateway", logger, async (undo) => {
    const kv = undo.add(openKvStore(config.REDIS_URL), (kv) => kv.close());
    const services = {
      identity: config.IDENTITY_URL,
      "crm-records": config.CRM_RECORDS_URL,
      "webhook-delivery": config.WEBHOOK_DELIVERY_URL,
    };
    const security = undo.add(
      createSecurity({ config: { ...config, JWT_SECRET: jwtSecret }, kv, redisUrl: config.REDIS_URL, identityUrl: config.IDENTITY_URL, internalTokenSecret, logger }),
      (security) => security.close(),
    );
    const forwarder = undo.add(
      new Forwarder({
        services,
        ...(options.inProcess ? { inProcess: options.inProcess } : {}),
        internalTokenSecret,
        timeoutMs: config.UPSTREAM_TIMEOUT_MS,
        maxResponseBytes: config.UPSTREAM_MAX_RESPONSE_BYTES,
        reuseInternalTokens: config.INTERNAL_TOKEN_REUSE,
        forwardInProcess: config.FORWARD_IN_PROCESS,
        undiciDispatch: config.UNDICI_DISPATCH,
      }),
      (forwarder) => forwarder.close(),
    );
    const capabilities = new CapabilitiesSource({
      config,
      identityUrl: config.IDENTITY_URL,
      webhookDeliveryUrl: config.WEBHOOK_DELIVERY_URL,
      internalTokenSecret,
    });
    const readiness: ReadinessCheck[] = [
      { name: "kv", check: () => kv.ping() },
      ...(Object.keys(services) as Array<keyof typeof services>).map((name) => ({ name, check: () => forwarder.checkHealth(name) })),
    ];
    mountChecksInOneLayer(config.LEAN_REQUEST_CONTEXT);
    const app = createApp({
      logger,
      security,
      forwarder,
      idempotency: new IdempotencyStore(kv, idempotencyKey, { logger }),
      documents: { capabilities: () => capabilities.get(), openapi: () => buildOpenApiDocument(openApiRegistrations), docsHtml: docsHtml() },
      trustedProxies: config.TRUSTED_PROXIES.map((entry) => normalizeAllowedIp(entry)!),
      trustTraceparent: config.TRUST_TRACEPARENT,
      forwardWithoutRouter: config.FORWARD_WITHOUT_ROUTER,
      leanRequestContext: config.LEAN_REQUEST_CONTEXT,
      internalTokenSecret,
      readiness,
    });
    const server = undo.listening(await listen(app, config.PORT, config.HOST, { prototypesAtBirth: config.EXPRESS_PROTOTYPES_AT_BIRTH }), config.SHUTDOWN_DRAIN_MS);
    const metricsServer =
      config.METRICS_PORT === undefined ? undefined : undo.listening(await listenForMetrics(config.METRICS_PORT, config.METRICS_HOST, readiness, logger), config.SHUTDOWN_DRAIN_MS);
    const metricsUrl = metricsServer ? `${metricsServer.url}/metrics` : undefined;
    logger.info({ url: server.url, boundTo: server.boundTo, ...(metricsUrl ? { metricsUrl } : {}) }, "gateway listening");
    return { url: server.url, port: server.port, boundTo: server.boundTo, ...(metricsUrl ? { metricsUrl } : {}) };
  });
}

/**
 * GET /metrics on a port of its own, never the public one: what the process counts is for the
 * operator's scraper, not for API clients. In the single process it covers all four services. Beside
 * it the probes with their detail: /readyz names each dependency and its state, which the public
 * port's /readyz does not tell.
 */
async function listenForMetrics(port: number, host: string, readiness: readonly ReadinessCheck[], logger: Logger): Promise<ListeningServer> {
  const app = express();
  app.disable("x-powered-by");
  app.get("/metrics", metricsHandler());
  app.get("/healthz", (_req, res) => void res.json({ status: "ok" }));
  app.get("/readyz", readinessHandler(readiness, { detail: true, logger }));
  app.use((_req, res) => void res.status(404).end());
  return listen(app, port, host);
}
