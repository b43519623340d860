import type { Express } from "express";
import { internalAuditRouter } from "@crm/audit";
import type { WebhookCapabilities } from "@crm/contracts";
import type { Logger } from "@crm/logger";
import { createServiceApp, type ReadinessCheck, type ServiceAppDevices } from "@crm/service-kit";
import { webhookRouter, type WebhookRouterDeps } from "./http/webhook.router";

export interface AppDeps extends WebhookRouterDeps {
  logger: Logger;
  internalTokenSecret: string;
  readiness: ReadinessCheck[];
  /** The delivery settings this process runs with, for the gateway's /capabilities. */
  capabilities: WebhookCapabilities;
  /** Tuning devices of the service app turned off (serviceAppDevicesOf of the configuration). */
  appDevices?: ServiceAppDevices;
}

/** The service's Express app, not listening: start() listens, tests drive it in-process. */
export function createApp(deps: AppDeps): Express {
  return createServiceApp({
    logger: deps.logger,
    internalTokenSecret: deps.internalTokenSecret,
    readiness: deps.readiness,
    api: webhookRouter(deps),
    internal: internalAuditRouter(deps.webhooks.db, "webhooks"),
    capabilities: deps.capabilities,
    devices: deps.appDevices,
  });
}
