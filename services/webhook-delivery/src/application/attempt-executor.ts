import type { Logger } from "@crm/logger";
import { deliveryMetrics, startSpan, tracingEnabled, type TraceCarrier } from "@crm/telemetry";
import { decideAfterAttempt } from "../domain/retry-policy";
import { OpenedSecrets, type SecretKeyring, UnreadableSecretError } from "../domain/secret-keyring";
import { buildDeliveryHeaders, type SigningKeys, signingKeys } from "../domain/signature";
import type { Dispatcher } from "../outbound/dispatcher";
import type { ClaimedDelivery, DeliveryRepository, StartedAttempt } from "../persistence/delivery.repository";
import { AttemptRecorder } from "./attempt-recorder";

/** responseBody of a delivery cancelled because its webhook was deactivated. */
export const INACTIVE_WEBHOOK_MESSAGE = "Webhook is inactive; delivery cancelled";
/** responseBody of a delivery whose signing secret is sealed with a key the service does not have. */
export const UNREADABLE_SECRET_MESSAGE = "Signing secret cannot be decrypted; delivery not sent";
/**
 * An attempt that starts this soon after its claim sends what the claim statement read, under the
 * claim's own lease (which outlasts the attempt by LEASE_MARGIN_MS); one that waited longer for a slot
 * renews its lease and reads the webhook again (it may have been changed or deactivated meanwhile).
 * A second statement per attempt saved, for a view of the webhook at most this old.
 */
export const FRESH_CLAIM_MS = 1_000;
/**
 * How long an attempt's outcome waits for others to share its database statement (AttemptRecorder):
 * the send is over by then, so only the delivery record lags, by this much at most when idle
 * (docs/performance.md D22: fewer statements and less PostgreSQL CPU per delivery).
 */
export const OUTCOME_LINGER_MS = 25;
export interface AttemptExecutorOptions {
  deliveries: Pick<DeliveryRepository, "startAttempt" | "cancel" | "recordAttempts">;
  dispatcher: Dispatcher;
  /** Opens the stored signing secret, only to sign with. */
  keyring: SecretKeyring;
  /** WEBHOOK_RETRY_DELAYS_MS. */
  retryDelaysMs: readonly number[];
  /** How long a claim stays ours; must outlast one attempt (the dispatcher's time-out) by a margin. */
  leaseMs: number;
  /**
   * WEBHOOK_LEASE_ON_CREATE (docs/performance.md D19): an attempt soon after its claim sends what the claim
   * read (FRESH_CLAIM_MS); false: every attempt starts with startAttempt's statement. On when omitted.
   */
  freshClaims?: boolean;
  /** WEBHOOK_KEPT_SECRETS (docs/performance.md D28): opened secrets kept; false opens one for every attempt. On when omitted. */
  keptSecrets?: boolean;
  logger: Logger;
  now?: () => Date;
}

/**
 * Runs one attempt of a claimed delivery: starts it (or learns another instance took it over), signs,
 * sends, and hands back the step that records its outcome. Which attempts run, when, and how many at
 * once is the scheduler's (../scheduler/delivery-scheduler.ts): every attempt, first, retried or manual,
 * comes through it to here, so there is one path for every attempt.
 */
export class AttemptExecutor {
  private readonly now: () => Date;
  /** Outcomes are written in batches: one statement for the attempts that finish together. */
  private readonly recorder: AttemptRecorder;
  private readonly metrics = deliveryMetrics();
  /** The metrics' children per outcome label, looked up once (prom-client's labels() allocates per call). */
  private readonly outcomeMetrics = new Map<string, { attempts: { inc(): void }; duration: { observe(value: number): void } }>();
  /** Opened secrets, kept as their signing keys. */
  private readonly secrets: OpenedSecrets<SigningKeys>;

  constructor(private readonly options: AttemptExecutorOptions) {
    this.now = options.now ?? (() => new Date());
    this.recorder = new AttemptRecorder({ deliveries: options.deliveries, lingerMs: OUTCOME_LINGER_MS });
    this.secrets = new OpenedSecrets(options.keyring, options.keptSecrets === false ? 0 : undefined, signingKeys);
  }

  leaseFrom(now: Date): Date {
    return new Date(now.getTime() + this.options.leaseMs);
  }

  /** The secret's signing keys, or undefined (logged loudly) when it is sealed with an unknown key or altered. */
  private openSecret(started: StartedAttempt): SigningKeys | undefined {
    try {
      return this.secrets.open(started.webhookId, started.secret);
    } catch (err) {
      if (!(err instanceof UnreadableSecretError)) throw err;
      this.options.logger.error(
        { deliveryId: started.id, webhookId: started.webhookId, keyId: err.keyId, reason: err.reason },
        "webhook signing secret cannot be decrypted (is its key missing from WEBHOOK_SECRET_KEYS?); delivery failed",
      );
      return undefined;
    }
  }

  /** The attempt as its claim read it, if the claim is recent enough to send that (FRESH_CLAIM_MS). */
  private freshStart(claim: ClaimedDelivery): StartedAttempt | undefined {
    const read = claim.read;
    if (read === undefined || this.options.freshClaims === false || this.now().getTime() - read.at.getTime() > FRESH_CLAIM_MS) return undefined;
    const { send } = read;
    // Field by field: spreading the row objects (built by rest destructuring, in dictionary mode) cost
    // 3% of webhook-delivery's profile samples at the drain, for an object of fixed shape.
    return {
      id: claim.id,
      webhookId: claim.webhookId,
      businessId: claim.businessId,
      attempt: claim.attempt,
      leaseUntil: claim.leaseUntil,
      read: undefined,
      event: send.event,
      payload: send.payload,
      manualRetry: send.manualRetry,
      url: send.url,
      secret: send.secret,
      previousSecret: send.previousSecret,
      webhookActive: send.webhookActive,
    };
  }

  /**
   * The rotated-away secret during its grace period. One that cannot be opened only costs the second
   * signature (logged); the attempt is still signed with the current secret and sent.
   */
  private openPreviousSecret(started: StartedAttempt): SigningKeys | undefined {
    if (started.previousSecret === null) return undefined;
    try {
      return this.secrets.open(started.webhookId, started.previousSecret);
    } catch (err) {
      if (!(err instanceof UnreadableSecretError)) throw err;
      this.options.logger.warn(
        { deliveryId: started.id, webhookId: started.webhookId, keyId: err.keyId, reason: err.reason },
        "previous webhook signing secret cannot be decrypted; signing with the current secret only",
      );
      return undefined;
    }
  }

  /** Sends one attempt; resolves with the step that records its outcome (none when nothing was sent). */
  async attempt(claim: ClaimedDelivery, trace: TraceCarrier | undefined): Promise<(() => Promise<void>) | undefined> {
    const { deliveries, dispatcher, logger } = this.options;
    // The claim may have waited for a slot: renew it, or learn that another instance took over.
    const started = this.freshStart(claim) ?? (await deliveries.startAttempt(claim, this.leaseFrom(this.now())));
    if (!started) {
      logger.info({ deliveryId: claim.id }, "delivery claimed elsewhere; skipping");
      return;
    }
    if (!started.webhookActive) {
      await deliveries.cancel(started, INACTIVE_WEBHOOK_MESSAGE, this.now());
      this.metrics.cancelled.labels("webhook_inactive").inc();
      logger.info({ deliveryId: claim.id, webhookId: claim.webhookId }, "webhook inactive; delivery cancelled");
      return;
    }
    const secret = this.openSecret(started);
    if (secret === undefined) {
      // Nothing can be signed, so nothing is sent; FAILED (not retried) until an operator restores the
      // key, after which a manual retry sends it.
      await deliveries.cancel(started, UNREADABLE_SECRET_MESSAGE, this.now());
      this.metrics.cancelled.labels("secret_unreadable").inc();
      return;
    }
    // The body's UTF-8 bytes once: both signatures and the request use them.
    const body = Buffer.from(started.payload, "utf8");
    const headers = buildDeliveryHeaders({
      deliveryId: started.id,
      event: started.event,
      secret,
      previousSecret: this.openPreviousSecret(started),
      body,
      timestamp: this.now(),
    });
    // Tracing on: the attempt's span continues the event's trace (first attempts), or starts its own
    // (retries, attempts claimed from the database). The receiver is not sent our trace context.
    const span = tracingEnabled()
      ? startSpan("webhook-delivery", "webhook attempt", {
          kind: "client",
          parent: trace ?? {},
          attributes: { "crm.delivery.id": started.id, "crm.webhook.id": started.webhookId, "crm.delivery.attempt": started.attempt + 1 },
        })
      : undefined;
    const outcome = await dispatcher.send({ url: started.url, headers, body });
    // What the delivery log words generically (the address a refused name resolved to, the resolver's
    // code) is for operators: logged here, never stored.
    if (outcome.detail !== undefined) {
      logger[outcome.failure === "refused" ? "warn" : "info"](
        { deliveryId: started.id, webhookId: started.webhookId, businessId: started.businessId, detail: outcome.detail },
        "webhook target refused or not resolved",
      );
    }
    const outcomeLabel = outcome.ok ? "success" : outcome.responseStatus > 0 ? "http_error" : (outcome.failure ?? "network_error");
    const metrics = this.metricsFor(outcomeLabel);
    metrics.attempts.inc();
    metrics.duration.observe(outcome.durationMs / 1000);
    if (span) {
      span.setAttribute("crm.attempt.outcome", outcomeLabel);
      if (outcome.responseStatus > 0) span.setAttribute("http.response.status_code", outcome.responseStatus);
      if (!outcome.ok) span.fail(outcomeLabel);
      span.end();
    }
    const at = this.now();
    const decision = decideAfterAttempt({
      attempt: started.attempt + 1,
      succeeded: outcome.ok,
      now: at,
      delaysMs: this.options.retryDelaysMs,
      manual: started.manualRetry,
    });
    return async () => {
      const recorded = await this.recorder.record(
        started,
        {
          status: decision.status,
          nextRetryAt: decision.nextRetryAt,
          responseStatus: outcome.responseStatus,
          responseBody: outcome.responseBody,
          durationMs: outcome.durationMs,
          succeeded: outcome.ok,
        },
        at,
      );
      const log = {
        deliveryId: started.id,
        webhookId: started.webhookId,
        attempt: started.attempt + 1,
        status: decision.status,
        responseStatus: outcome.responseStatus,
        durationMs: outcome.durationMs,
      };
      if (!recorded) logger.warn(log, "delivery lease lost before the outcome was recorded");
      else {
        if (decision.status === "SUCCESS" || decision.status === "FAILED") this.metrics.finished.labels(decision.status).inc();
        logger.info(log, "delivery attempt");
      }
    };
  }

  private metricsFor(outcome: string): { attempts: { inc(): void }; duration: { observe(value: number): void } } {
    let children = this.outcomeMetrics.get(outcome);
    if (children === undefined) {
      children = { attempts: this.metrics.attempts.labels(outcome), duration: this.metrics.attemptDuration.labels(outcome) };
      this.outcomeMetrics.set(outcome, children);
    }
    return children;
  }
}
