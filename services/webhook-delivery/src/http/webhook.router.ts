import { Router, type Request } from "express";
import { ok, okList, webhookRoutes, WEBHOOK_RECOVER_MAX_WINDOW_MS, WEBHOOK_TEST_EVENT } from "@crm/contracts";
import { errors, validationError } from "@crm/errors";
import { paginationMeta, parsePagination } from "@crm/query-language";
import { mountRoute, principalOf, requestBody } from "@crm/service-kit";
import { checkTargetUrl } from "../outbound/ssrf-guard";
import { serializePayload } from "../domain/payload";
import { generateWebhookSecret, secretPrefix } from "../domain/secret";
import { checkWebhookFilter } from "../domain/webhook-filter";
import { isRedactedFormOf } from "../domain/url-credentials";
import type { Webhook } from "../generated/prisma/client";
import type { DeliveryRepository } from "../persistence/delivery.repository";
import type { WebhookChanges, WebhookRepository } from "../persistence/webhook.repository";
import type { AttemptExecutor } from "../application/attempt-executor";
import { deliveryView, webhookView, webhookWithSecretView } from "./webhook.presenter";

export interface WebhookRouterDeps {
  webhooks: WebhookRepository;
  deliveries: DeliveryRepository;
  executor: AttemptExecutor;
  /** How long a manual retry waits for its attempt before answering 202 with the record as it is then. */
  manualRetryWaitMs: number;
  now?: () => Date;
}

/**
 * An absolute http: or https: URL, else 400001 on `url`. Whether the address may be called is decided
 * at delivery time (decisions §6): a private or loopback target, literal or resolved, becomes a failed
 * attempt with responseStatus 0 that the owner sees in the delivery log, not a refusal here.
 */
function targetUrl(url: string): string {
  const check = checkTargetUrl(url, { allowPrivateTargets: true });
  if (!check.ok) throw validationError("url", check.message);
  return url;
}

/** Subscribing twice to one event means nothing more; keep the first occurrence's order. */
function uniqueEvents(events: string[]): string[] {
  return [...new Set(events)];
}

/** The `{id}` webhook of the caller's business, or 404001 (another tenant's, unknown or malformed id alike). */
async function webhookOf(deps: WebhookRouterDeps, req: Request): Promise<Webhook> {
  const webhook = await deps.webhooks.find(principalOf(req).businessId, String(req.params["id"]));
  if (!webhook) throw errors.notFound();
  return webhook;
}

/**
 * What setting `isActive` changes (extensions §E1.3). true: the owner says the endpoint is fixed, so the
 * health starts over (consecutiveFailures 0, disabledReason null), also when it was active already.
 * false on an active webhook: the owner's choice (no disabledReason), and the moment it stopped, so
 * deliveries waiting for a retry then are never sent, even after a re-enable.
 */
function activityChanges(current: Webhook, isActive: boolean, at: Date): WebhookChanges {
  if (isActive) return { isActive: true, consecutiveFailures: 0, disabledReason: null };
  return current.isActive ? { isActive: false, disabledReason: null, deactivatedAt: at } : { isActive: false };
}

export function webhookRouter(deps: WebhookRouterDeps): Router {
  const router = Router();
  const now = deps.now ?? (() => new Date());

  mountRoute(router, webhookRoutes.create, async (req, res) => {
    const input = requestBody(webhookRoutes.create, req);
    const filter = input.filter ?? null;
    if (filter !== null) checkWebhookFilter(filter, input.events);
    const secret = generateWebhookSecret();
    const webhook = await deps.webhooks.create({
      businessId: principalOf(req).businessId,
      url: targetUrl(input.url),
      events: uniqueEvents(input.events),
      description: input.description ?? "",
      autoDisableAfter: input.autoDisableAfter ?? null,
      secret,
      secretPrefix: secretPrefix(secret),
      filter,
    });
    res.status(201).json(ok(webhookWithSecretView(webhook, secret)));
  });

  mountRoute(router, webhookRoutes.list, async (req, res) => {
    const page = parsePagination(req.query);
    const { rows, total } = await deps.webhooks.list(principalOf(req).businessId, page);
    res.json(
      okList(
        rows.map((row) => webhookView(row)),
        paginationMeta(total, page.page, page.perPage),
      ),
    );
  });

  mountRoute(router, webhookRoutes.get, async (req, res) => {
    res.json(ok(webhookView(await webhookOf(deps, req))));
  });

  mountRoute(router, webhookRoutes.update, async (req, res) => {
    const current = await webhookOf(deps, req);
    const input = requestBody(webhookRoutes.update, req);
    // The filter must suit the events it will apply to: checked when either of them changes.
    const filter = input.filter !== undefined ? input.filter : current.filter;
    if (filter !== null && (input.filter !== undefined || input.events !== undefined)) checkWebhookFilter(filter, input.events ?? current.events);
    const updated = await deps.webhooks.update(current.businessId, current.id, {
      ...(input.url !== undefined && !isRedactedFormOf(input.url, current.url) && { url: targetUrl(input.url) }),
      ...(input.events !== undefined && { events: uniqueEvents(input.events) }),
      ...(input.description !== undefined && { description: input.description }),
      ...(input.filter !== undefined && { filter: input.filter }),
      ...(input.autoDisableAfter !== undefined && { autoDisableAfter: input.autoDisableAfter }),
      ...(input.isActive !== undefined && activityChanges(current, input.isActive, now())),
    });
    if (!updated) throw errors.notFound();
    res.json(ok(webhookView(updated)));
  });

  // Deactivates, keeps the record (interface §3); deleting twice answers the same.
  mountRoute(router, webhookRoutes.deactivate, async (req, res) => {
    const current = await webhookOf(deps, req);
    const updated = await deps.webhooks.update(current.businessId, current.id, activityChanges(current, false, now()));
    if (!updated) throw errors.notFound();
    res.json(ok(webhookView(updated)));
  });

  mountRoute(router, webhookRoutes.test, async (req, res) => {
    const webhook = await webhookOf(deps, req);
    const at = now();
    const delivery = await deps.deliveries.createTest({
      webhookId: webhook.id,
      businessId: webhook.businessId,
      event: WEBHOOK_TEST_EVENT,
      payload: serializePayload({ event: WEBHOOK_TEST_EVENT, data: { webhookId: webhook.id }, businessId: webhook.businessId, timestamp: at }),
      now: at,
    });
    res.status(201).json(ok(deliveryView(delivery)));
  });

  mountRoute(router, webhookRoutes.rotateSecret, async (req, res) => {
    const current = await webhookOf(deps, req);
    // No body means no grace period (extensions §E1.1).
    const input = requestBody(webhookRoutes.rotateSecret, req);
    const secret = generateWebhookSecret();
    const at = now();
    const updated = await deps.webhooks.rotateSecret(current.businessId, current.id, {
      secret,
      secretPrefix: secretPrefix(secret),
      gracePeriodSeconds: input.gracePeriodSeconds ?? 0,
      now: at,
    });
    if (!updated) throw errors.notFound();
    res.json(ok(webhookWithSecretView(updated, secret, at)));
  });

  mountRoute(router, webhookRoutes.deliveries, async (req, res) => {
    const page = parsePagination(req.query);
    const webhook = await webhookOf(deps, req);
    const { rows, total } = await deps.deliveries.list(webhook.id, page);
    res.json(okList(rows.map(deliveryView), paginationMeta(total, page.page, page.perPage)));
  });

  mountRoute(router, webhookRoutes.retryDelivery, async (req, res) => {
    const webhook = await webhookOf(deps, req);
    const deliveryId = String(req.params["deliveryId"]);
    const result = await deps.deliveries.requestManualRetry(webhook.businessId, webhook.id, deliveryId, now());
    if (result === "not-found") throw errors.notFound();
    if (result === "not-failed") throw errors.deliveryNotRetryable();
    // The re-send is durable from here (the record is due); waiting a bounded time lets the answer
    // usually show the attempt's outcome without ever holding the request for a hung receiver.
    await Promise.race([deps.executor.sendNow([deliveryId]), delay(deps.manualRetryWaitMs)]);
    const delivery = await deps.deliveries.find(webhook.businessId, webhook.id, deliveryId);
    if (!delivery) throw errors.notFound();
    res.status(202).json(ok(deliveryView(delivery)));
  });

  mountRoute(router, webhookRoutes.recover, async (req, res) => {
    const webhook = await webhookOf(deps, req);
    const input = requestBody(webhookRoutes.recover, req);
    const at = now();
    const since = new Date(input.since);
    const until = input.until === undefined ? at : new Date(input.until);
    if (since >= until) throw validationError("since", "since must be before until (default: now)");
    if (until.getTime() - since.getTime() > WEBHOOK_RECOVER_MAX_WINDOW_MS) throw validationError("since", "The window from since to until is at most 14 days");
    // Nothing would be sent to an inactive webhook: say so rather than fail every delivery again.
    if (!webhook.isActive) throw errors.deliveryNotRetryable();
    const ids = await deps.deliveries.requestRecovery(webhook.businessId, webhook.id, { since, until }, at);
    // Durable from here (each record is due now); sent in bounded batches without holding the request,
    // and whatever this process does not get to (a restart) the retry cycle sends.
    void sendInBatches(deps.executor, ids);
    res.status(202).json(ok({ recovered: ids.length }));
  });

  return router;
}

/** Claims a bounded number of recovered deliveries at a time: a large recovery never floods memory or slots. */
const RECOVERY_BATCH = 20;

async function sendInBatches(executor: AttemptExecutor, ids: readonly string[]): Promise<void> {
  for (let i = 0; i < ids.length; i += RECOVERY_BATCH) await executor.sendNow(ids.slice(i, i + RECOVERY_BATCH));
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}
