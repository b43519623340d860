import type { Logger } from "@crm/logger";
import type { ConcurrencyLimiter } from "../delivery/concurrency";
import type { Dispatcher } from "../delivery/dispatcher";
import { decideAfterAttempt } from "../domain/retry-policy";
import { buildDeliveryHeaders } from "../domain/signature";
import type { ClaimedDelivery, DeliveryRepository } from "../persistence/delivery.repository";

/** responseBody of a delivery cancelled because its webhook was deactivated. */
export const INACTIVE_WEBHOOK_MESSAGE = "Webhook is inactive; delivery cancelled";

export interface AttemptExecutorOptions {
  deliveries: DeliveryRepository;
  dispatcher: Dispatcher;
  limiter: ConcurrencyLimiter;
  /** WEBHOOK_RETRY_DELAYS_MS. */
  retryDelaysMs: readonly number[];
  /** How long a claim stays ours; must outlast one attempt (the dispatcher's time-out) by a margin. */
  leaseMs: number;
  logger: Logger;
  now?: () => Date;
}

/**
 * Makes delivery attempts: claims, sends under the concurrency limits, records the outcome. Used by
 * the event consumer (first attempt at once), the retry scheduler and manual retries alike, so there
 * is one path for every attempt. Never throws to its callers: failures are logged, and the record
 * stays due, so the retry cycle picks it up again once its lease has run out.
 */
export class AttemptExecutor {
  private readonly tasks = new Set<Promise<void>>();
  private stopping = false;
  private readonly now: () => Date;

  constructor(private readonly options: AttemptExecutorOptions) {
    this.now = options.now ?? (() => new Date());
  }

  /** Attempts claimed or running in this process. */
  get pending(): number {
    return this.tasks.size;
  }

  /** Claims the given deliveries (if still due and unclaimed) and attempts them; resolves when done. */
  sendNow(ids: readonly string[]): Promise<void> {
    if (this.stopping || ids.length === 0) return Promise.resolve();
    return this.track(
      (async () => {
        const now = this.now();
        const claims = await this.options.deliveries.claimDue({ now, leaseUntil: this.leaseFrom(now), limit: ids.length, ids });
        await Promise.all(this.run(claims));
      })(),
    );
  }

  /** Attempts already-claimed deliveries; each promise resolves when its attempt is recorded. */
  run(claims: readonly ClaimedDelivery[]): Promise<void>[] {
    return claims.map((claim) =>
      this.track(this.options.limiter.run(claim.webhookId, () => this.attempt(claim))),
    );
  }

  /** Stops taking work and waits for every attempt in flight to be recorded. */
  async drain(): Promise<void> {
    this.stopping = true;
    while (this.tasks.size > 0) await Promise.allSettled([...this.tasks]);
  }

  leaseFrom(now: Date): Date {
    return new Date(now.getTime() + this.options.leaseMs);
  }

  private track(task: Promise<void>): Promise<void> {
    const tracked = task.catch((err: unknown) => this.options.logger.error({ err }, "delivery attempt failed to run"));
    this.tasks.add(tracked);
    void tracked.finally(() => this.tasks.delete(tracked));
    return tracked;
  }

  private async attempt(claim: ClaimedDelivery): Promise<void> {
    const { deliveries, dispatcher, logger } = this.options;
    // Shutting down: an attempt that has not started yet is handed back rather than sent late.
    if (this.stopping) {
      await deliveries.releaseClaim(claim, this.now());
      return;
    }
    // The claim may have waited for a slot: renew it, or learn that another instance took over.
    const started = await deliveries.startAttempt(claim, this.leaseFrom(this.now()));
    if (!started) {
      logger.info({ deliveryId: claim.id }, "delivery claimed elsewhere; skipping");
      return;
    }
    if (!started.webhookActive) {
      await deliveries.cancel(started, INACTIVE_WEBHOOK_MESSAGE, this.now());
      logger.info({ deliveryId: claim.id, webhookId: claim.webhookId }, "webhook inactive; delivery cancelled");
      return;
    }
    const headers = buildDeliveryHeaders({
      deliveryId: started.id,
      event: started.event,
      secret: started.secret,
      body: started.payload,
      timestamp: this.now(),
    });
    const outcome = await dispatcher.send({ url: started.url, headers, body: started.payload });
    const at = this.now();
    const decision = decideAfterAttempt({
      attempt: started.attempt + 1,
      succeeded: outcome.ok,
      now: at,
      delaysMs: this.options.retryDelaysMs,
      manual: started.manualRetry,
    });
    const recorded = await deliveries.recordAttempt(
      started,
      { ...decision, responseStatus: outcome.responseStatus, responseBody: outcome.responseBody, durationMs: outcome.durationMs, succeeded: outcome.ok },
      at,
    );
    const log = { deliveryId: started.id, webhookId: started.webhookId, attempt: started.attempt + 1, status: decision.status, responseStatus: outcome.responseStatus, durationMs: outcome.durationMs };
    if (!recorded) logger.warn(log, "delivery lease lost before the outcome was recorded");
    else logger.info(log, "delivery attempt");
  }
}
