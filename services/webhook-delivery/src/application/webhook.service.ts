// The webhook operations of interface §3 and extensions §E1: what creating, changing, testing, rotating,
// retrying and recovering mean, each within the caller's business. http/webhook.router.ts parses and answers.
import {
  type DefinedCustomFields,
  WEBHOOK_RECOVER_MAX_PER_CALL,
  WEBHOOK_RECOVER_MAX_WINDOW_MS,
  WEBHOOK_TEST_EVENT,
  type WebhookCreate,
  type WebhookRecover,
  type WebhookRotateSecret,
  type WebhookUpdate,
} from "@crm/contracts";
import { type AuditContext, AuditWriter, diffChanges } from "@crm/audit";
import { errors, validationError } from "@crm/errors";
import type { Pagination } from "@crm/query-language";
import { serializePayload } from "../domain/payload";
import { generateWebhookSecret, secretPrefix } from "../domain/secret";
import { isRedactedFormOf } from "../domain/url-credentials";
import { requireReadableEvents, type Subscriber } from "../domain/subscription-permission";
import { checkWebhookFilter } from "../domain/webhook-filter";
import type { Delivery, Webhook } from "../generated/prisma/client";
import { webhookView } from "./webhook-views";
import { checkTargetUrl } from "../outbound/ssrf-guard";
import type { DeliveryRepository } from "../persistence/delivery.repository";
import type { WebhookChanges, WebhookRepository } from "../persistence/webhook.repository";
import type { DeliveryScheduler } from "../scheduler/delivery-scheduler";

export interface WebhookServiceDeps {
  webhooks: WebhookRepository;
  deliveries: DeliveryRepository;
  scheduler: Pick<DeliveryScheduler, "sendNow">;
  /** How long a manual retry waits for its attempt before answering 202 with the record as it is then. */
  manualRetryWaitMs: number;
  now?: () => Date;
  /** Writes the webhook changes' audit entries (extensions §E7) in their transactions. */
  audit?: AuditWriter;
}

/** A new or rotated secret is shown once, in the answer that made it. */
export interface WithSecret {
  webhook: Webhook;
  secret: string;
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

/**
 * Whether an update changes what the webhook sends or where: its events (as a set), its URL (not its
 * redacted form sent back), or its filter. Whoever does must be able to read every record it then
 * sends (extensions §E10): changing only the URL of a webhook subscribed to invoices would otherwise
 * hand a key scoped to webhooks.update every future invoice, and a filter asks questions of their data.
 */
function changesWhatIsSent(current: Webhook, input: WebhookUpdate): boolean {
  const events = input.events !== undefined && !sameEvents(input.events, current.events);
  const url = input.url !== undefined && input.url !== current.url && !isRedactedFormOf(input.url, current.url);
  const filter = input.filter !== undefined && input.filter !== current.filter;
  return events || url || filter;
}

function sameEvents(a: readonly string[], b: readonly string[]): boolean {
  const set = new Set(a);
  return set.size === new Set(b).size && b.every((event) => set.has(event));
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

const webhookTarget = (id: string) => ({ type: "webhook", id });

export class WebhookService {
  private readonly now: () => Date;
  private readonly audit: AuditWriter;

  constructor(private readonly deps: WebhookServiceDeps) {
    this.now = deps.now ?? (() => new Date());
    this.audit = deps.audit ?? new AuditWriter("webhooks", this.now);
  }

  /**
   * `subscriber`: the caller, who must be able to read every event's records (extensions §E10).
   * `definedFields`: the business's active custom fields the filter may name (checkWebhookFilter).
   */
  async create(businessId: string, input: WebhookCreate, subscriber: Subscriber, context: AuditContext, definedFields?: DefinedCustomFields): Promise<WithSecret> {
    requireReadableEvents(input.events, subscriber);
    const filter = input.filter ?? null;
    if (filter !== null) checkWebhookFilter(filter, input.events, definedFields);
    const secret = generateWebhookSecret();
    const row = {
      businessId,
      url: targetUrl(input.url),
      events: uniqueEvents(input.events),
      description: input.description ?? "",
      autoDisableAfter: input.autoDisableAfter ?? null,
      secret,
      secretPrefix: secretPrefix(secret),
      filter,
    };
    const webhook = await this.deps.webhooks.transaction(async (webhooks, tx) => {
      const webhook = await webhooks.create(row);
      // The view shows no secret (only its prefix) and the URL with its credentials redacted.
      await this.audit.record(tx, businessId, { action: "webhook.created", target: webhookTarget(webhook.id), changes: webhookView(webhook, this.now()) }, context);
      return webhook;
    });
    return { webhook, secret };
  }

  list(businessId: string, page: Pagination): Promise<{ rows: Webhook[]; total: number }> {
    return this.deps.webhooks.list(businessId, page);
  }

  /**
   * The `id` webhook of the business, or 404001 (another tenant's, unknown or malformed id alike). The
   * operations below take the webhook it found: the router looks it up before reading the body, so an
   * unknown webhook is 404001 whatever the body.
   */
  async get(businessId: string, id: string): Promise<Webhook> {
    const webhook = await this.deps.webhooks.find(businessId, id);
    if (!webhook) throw errors.notFound();
    return webhook;
  }

  /** `subscriber`: the caller; one that changes what is sent must be able to read all of it (changesWhatIsSent). */
  async update(current: Webhook, input: WebhookUpdate, subscriber: Subscriber, context: AuditContext, definedFields?: DefinedCustomFields): Promise<Webhook> {
    if (changesWhatIsSent(current, input)) requireReadableEvents(input.events ?? current.events, subscriber);
    // The filter must suit the events it will apply to: checked when either of them changes.
    const filter = input.filter !== undefined ? input.filter : current.filter;
    if (filter !== null && (input.filter !== undefined || input.events !== undefined)) checkWebhookFilter(filter, input.events ?? current.events, definedFields);
    return this.change(current, "webhook.updated", context, {
      ...(input.url !== undefined && !isRedactedFormOf(input.url, current.url) && { url: targetUrl(input.url) }),
      ...(input.events !== undefined && { events: uniqueEvents(input.events) }),
      ...(input.description !== undefined && { description: input.description }),
      ...(input.filter !== undefined && { filter: input.filter }),
      ...(input.autoDisableAfter !== undefined && { autoDisableAfter: input.autoDisableAfter }),
      ...(input.isActive !== undefined && activityChanges(current, input.isActive, this.now())),
    });
  }

  /** Deactivates, keeps the record (interface §3); deleting twice answers the same. */
  deactivate(current: Webhook, context: AuditContext): Promise<Webhook> {
    return this.change(current, "webhook.deleted", context, activityChanges(current, false, this.now()));
  }

  sendTest(webhook: Webhook): Promise<Delivery> {
    const at = this.now();
    return this.deps.deliveries.createTest({
      webhookId: webhook.id,
      businessId: webhook.businessId,
      event: WEBHOOK_TEST_EVENT,
      payload: serializePayload({ event: WEBHOOK_TEST_EVENT, data: { webhookId: webhook.id }, businessId: webhook.businessId, timestamp: at }),
      now: at,
    });
  }

  /** No grace period unless asked for (extensions §E1.1). */
  async rotateSecret(current: Webhook, input: WebhookRotateSecret, context: AuditContext): Promise<WithSecret & { at: Date }> {
    const secret = generateWebhookSecret();
    const at = this.now();
    const webhook = await this.deps.webhooks.transaction(async (webhooks, tx) => {
      const webhook = await webhooks.rotateSecret(current.businessId, current.id, {
        secret,
        secretPrefix: secretPrefix(secret),
        gracePeriodSeconds: input.gracePeriodSeconds ?? 0,
        now: at,
      });
      if (!webhook) throw errors.notFound();
      // "secret" is redacted by name: the entry says it changed, never what it is.
      const changes = { ...diffChanges(webhookView(current, at), webhookView(webhook, at)), secret: { from: null, to: null } };
      await this.audit.record(tx, current.businessId, { action: "webhook.secretRotated", target: webhookTarget(current.id), changes }, context);
      return webhook;
    });
    return { webhook, secret, at };
  }

  deliveries(webhook: Webhook, page: Pagination): Promise<{ rows: Delivery[]; total: number }> {
    return this.deps.deliveries.list(webhook.id, page);
  }

  async retryDelivery(webhook: Webhook, deliveryId: string): Promise<Delivery> {
    // Inactive webhooks receive nothing (decisions §6): refused as recover refuses them (extensions
    // §E1.2), rather than answered 202 with the delivery's last answer overwritten by a cancellation.
    if (!webhook.isActive) {
      if (!(await this.deps.deliveries.find(webhook.businessId, webhook.id, deliveryId))) throw errors.notFound();
      throw errors.deliveryNotRetryable();
    }
    const result = await this.deps.deliveries.requestManualRetry(webhook.businessId, webhook.id, deliveryId, this.now());
    if (result === "not-found") throw errors.notFound();
    if (result === "not-failed") throw errors.deliveryNotRetryable();
    // The re-send is durable from here (the record is due); waiting a bounded time lets the answer
    // usually show the attempt's outcome without ever holding the request for a hung receiver.
    const deadline = Date.now() + this.deps.manualRetryWaitMs;
    await Promise.race([this.deps.scheduler.sendNow([deliveryId]), delay(this.deps.manualRetryWaitMs)]);
    let delivery = await this.deps.deliveries.find(webhook.businessId, webhook.id, deliveryId);
    // The record was due, so a retry cycle (this instance's or another's) may have claimed it before
    // sendNow did, which then returns at once. A manual attempt always ends SUCCESS or FAILED (a
    // failure schedules nothing), so RETRYING means it is still in flight there: wait for it too.
    while (delivery?.status === "RETRYING" && delivery.manualRetry && Date.now() < deadline) {
      await delay(MANUAL_RETRY_POLL_MS);
      delivery = await this.deps.deliveries.find(webhook.businessId, webhook.id, deliveryId);
    }
    if (!delivery) throw errors.notFound();
    return delivery;
  }

  /**
   * Queues one manual attempt for each of the window's oldest FAILED deliveries, at most
   * WEBHOOK_RECOVER_MAX_PER_CALL (issue 35 item 8); `remaining`: the window's FAILED ones left for the
   * next call. Durable once it answers; the attempts are claimed as first attempts are, within the
   * business's room on each instance (DeliveryRepository.requestRecovery), so one business's
   * recovery never takes the workers other businesses' deliveries need.
   */
  async recover(webhook: Webhook, input: WebhookRecover): Promise<{ recovered: number; remaining: number }> {
    const at = this.now();
    const since = new Date(input.since);
    const until = input.until === undefined ? at : new Date(input.until);
    if (since >= until) throw validationError("since", "since must be before until (default: now)");
    if (until.getTime() - since.getTime() > WEBHOOK_RECOVER_MAX_WINDOW_MS) throw validationError("since", "The window from since to until is at most 14 days");
    // Nothing would be sent to an inactive webhook: say so rather than fail every delivery again.
    if (!webhook.isActive) throw errors.deliveryNotRetryable();
    return this.deps.deliveries.requestRecovery(webhook.businessId, webhook.id, { since, until }, at, WEBHOOK_RECOVER_MAX_PER_CALL);
  }

  /** Applies `changes` with its audit entry: `webhook.updated`, or `webhook.deleted` for a DELETE (which deactivates). */
  private async change(current: Webhook, action: "webhook.updated" | "webhook.deleted", context: AuditContext, changes: WebhookChanges): Promise<Webhook> {
    return this.deps.webhooks.transaction(async (webhooks, tx) => {
      const updated = await webhooks.update(current.businessId, current.id, changes);
      if (!updated) throw errors.notFound();
      const at = this.now();
      const audited = action === "webhook.updated" ? diffChanges(webhookView(current, at), webhookView(updated, at)) : null;
      await this.audit.record(tx, current.businessId, { action, target: webhookTarget(current.id), changes: audited }, context);
      return updated;
    });
  }
}

/** How often a manual retry whose attempt another claim is making looks for its outcome. */
const MANUAL_RETRY_POLL_MS = 25;

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}
