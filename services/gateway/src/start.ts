import { loadOrCreateSecret } from "@crm/config";
import { openKvStore } from "@crm/kv-store";
import { createLogger } from "@crm/logger";
import { listen, startService, type RunningService } from "@crm/service-kit";
import { request } from "undici";
import { createApp } from "./app";
import type { GatewayConfig } from "./config";
import { Forwarder } from "./http/forwarder";
import { IdempotencyStore } from "./http/idempotency";
import { buildCapabilities } from "./public/capabilities";
import { buildOpenApiDocument } from "./public/openapi";
import { docsHtml } from "./public/docs-page";
import { openApiRegistrations } from "./public/registrations";
import { createSecurity } from "./security";

export async function start(config: Readonly<GatewayConfig>): Promise<RunningService> {
  const logger = createLogger({ service: "gateway", level: config.LOG_LEVEL });
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
      new Forwarder({ services, internalTokenSecret, timeoutMs: config.UPSTREAM_TIMEOUT_MS, maxResponseBytes: config.UPSTREAM_MAX_RESPONSE_BYTES }),
      (forwarder) => forwarder.close(),
    );
    const app = createApp({
      logger,
      security,
      forwarder,
      idempotency: new IdempotencyStore(kv, idempotencyKey, { logger }),
      documents: { capabilities: buildCapabilities(config), openapi: () => buildOpenApiDocument(openApiRegistrations), docsHtml: docsHtml() },
      trustProxyHops: config.TRUST_PROXY_HOPS,
      readiness: [
        { name: "kv", check: () => kv.ping() },
        ...Object.entries(services).map(([name, url]) => ({
          name,
          check: async () => {
            const res = await request(`${url}/healthz`, { headersTimeout: 2000, bodyTimeout: 2000 });
            await res.body.dump();
            if (res.statusCode !== 200) throw new Error(`${name} answered ${res.statusCode}`);
          },
        })),
      ],
    });
    const server = undo.add(await listen(app, config.PORT, config.HOST), (server) => server.close());
    logger.info({ url: server.url }, "gateway listening");
    return { url: server.url, port: server.port };
  });
}
