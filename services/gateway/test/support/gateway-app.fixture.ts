// Test fixture: the gateway's real app (createApp) over given security stages, forwarding to test
// upstreams, with stub documents and no readiness checks.
import type { Express } from "express";
import type { KvStore } from "@crm/kv-store";
import type { Logger } from "@crm/logger";
import type { ReadinessCheck } from "@crm/service-kit";
import { createApp } from "../../src/app";
import { Forwarder, type ForwarderOptions } from "../../src/http/forwarder";
import { IdempotencyStore } from "../../src/http/idempotency";
import type { Security } from "../../src/security";
import { INTERNAL_SECRET } from "./security.fixture";

export interface GatewayAppOptions {
  logger: Logger;
  security: Security;
  kv: KvStore;
  /** Where each service is reached. */
  services: ForwarderOptions["services"];
  /** Names the idempotency store's key. */
  name: string;
  trustedProxies: readonly string[];
  /** IDEMPOTENCY_ENCRYPTION_KEY; derived from `name` when omitted. */
  idempotencyKey?: string;
  /** What /readyz checks; none when omitted. */
  readiness?: ReadinessCheck[];
  /** TRUST_TRACEPARENT; off (its default) when omitted. */
  trustTraceparent?: boolean;
  /** FORWARD_WITHOUT_ROUTER (D2); on (its default) when omitted. */
  forwardWithoutRouter?: boolean;
}

/** The app and its forwarder (close it after the tests). */
export function gatewayApp(options: GatewayAppOptions): { app: Express; forwarder: Forwarder } {
  const { logger } = options;
  const forwarder = new Forwarder({
    services: options.services,
    internalTokenSecret: INTERNAL_SECRET,
    timeoutMs: 5000,
    maxResponseBytes: 1024 * 1024,
  });
  const app = createApp({
    logger,
    security: options.security,
    forwarder,
    idempotency: new IdempotencyStore(options.kv, options.idempotencyKey ?? `${options.name}-test-idempotency-key-0123456789`, { logger }),
    documents: { capabilities: async () => ({ version: "test" }), openapi: () => ({ openapi: "3.0.3" }), docsHtml: "<html></html>" },
    readiness: options.readiness ?? [],
    trustedProxies: options.trustedProxies,
    trustTraceparent: options.trustTraceparent ?? false,
    ...(options.forwardWithoutRouter === undefined ? {} : { forwardWithoutRouter: options.forwardWithoutRouter }),
    internalTokenSecret: INTERNAL_SECRET,
  });
  return { app, forwarder };
}
