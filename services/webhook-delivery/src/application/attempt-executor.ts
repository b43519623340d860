import type { Logger } from "@crm/logger";
import { activeTraceHeaders, deliveryMetrics, startSpan, tracingEnabled, type TraceCarrier } from "@crm/telemetry";
import type { ConcurrencyLimiter } from "../outbound/concurrency";
import type { Dispatcher } from "../outbound/dispatcher";
import { decideAfterAttempt } from "../domain/retry-policy";
import { OpenedSecrets, UnreadableSecretError, type SecretKeyring } from "../domain/secret-keyring";
import { buildDeliveryHeaders, signingKeys, type SigningKeys } from "../domain/signature";
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
 * the send is over by then, so only the delivery record lags, by this much at most when idle.
 * bench:delivery (distributed, throughput): 0 -> 25 ms took webhook-delivery from 0.42-0.50 to
 * 0.26-0.30 statements per delivery and its PostgreSQL CPU from 740-810 to 550-575 µs per delivery.
 */
export const OUTCOME_LINGER_MS = 25;
/**
 * Outcomes sent but not yet written at most: beyond this, nothing new is claimed until the database
 * has caught up (a slow database slows the claims instead of filling memory). A claim's room is given
 * back once its send is over, so these are not counted against the pending bounds.
 */
export const MAX_OUTCOMES_WAITING = 1_000;

export interface AttemptExecutorOptions {
  deliveries: DeliveryRepository;
  dispatcher: Dispatcher;
  limiter: ConcurrencyLimiter;
  /** Opens the stored signing secret, only to sign with. */
  keyring: SecretKeyring;
  /** WEBHOOK_RETRY_DELAYS_MS. */
  retryDelaysMs: readonly number[];
  /** How long a claim stays ours; must outlast one attempt (the dispatcher's time-out) by a margin. */
  leaseMs: number;
  /**
   * Claims (in flight plus waiting for a slot) one business may hold at once through first attempts;
   * its further first attempts stay due in the database and are claimed as its claims finish.
   */
  maxPendingPerBusiness?: number;
  /** Claims this process holds at most through first attempts (the retry cycle has its own bound). */
  maxPending?: number;
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
  /** Claims held (waiting for a slot or in flight), overall and per business. */
  private claims = 0;
  /** Attempts sent whose outcome is not written yet (see MAX_OUTCOMES_WAITING). */
  private recording = 0;
  private readonly claimsPerBusiness = new Map<string, number>();
  /**
   * Businesses with first attempts left due in the database for want of room, in turn order, each
   * with a count of deferrals (a deferral during a claim must not be forgotten when the claim ends).
   */
  private readonly backlog = new Map<string, number>();
  private pumping: Promise<void> | undefined;
  private pumpAgain = false;
  /** Businesses the last pullFirstAttempts left out because this process held all it may of them. */
  private leftOutForRoom: string[] = [];
  private readonly maxPendingPerBusiness: number;
  private readonly maxPending: number;
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
    this.secrets = new OpenedSecrets(options.keyring, undefined, signingKeys);
    this.maxPendingPerBusiness = options.maxPendingPerBusiness ?? Infinity;
    this.maxPending = options.maxPending ?? Infinity;
  }

  /** Claims held now: in all, for the business holding the most, and businesses at their bound (metrics). */
  load(): { inFlight: number; busiestBusiness: number; businessesAtCap: number } {
    let busiest = 0;
    let atCap = 0;
    for (const [businessId, held] of this.claimsPerBusiness) {
      if (businessId === "") continue;
      if (held > busiest) busiest = held;
      if (held >= this.maxPendingPerBusiness) atCap += 1;
    }
    return { inFlight: this.claims, busiestBusiness: busiest, businessesAtCap: atCap };
  }

  /** Attempts claimed (waiting for a slot or running) in this process. */
  get pending(): number {
    return this.claims;
  }

  /**
   * Claims the given deliveries (if still due and unclaimed) and attempts them all; resolves when done.
   * For manual retries: first attempts of events go through sendNew, which respects the room.
   */
  sendNow(ids: readonly string[]): Promise<void> {
    if (this.stopping || ids.length === 0) return Promise.resolve();
    const limit = ids.length;
    // The caller's trace (tracing on) is carried to the attempts explicitly: an attempt may wait for
    // a slot and then run from another attempt's completion.
    const trace = activeTraceHeaders();
    // The room is taken before the claim query, so concurrent calls cannot all see the same room.
    this.hold("", limit);
    return this.track(
      (async () => {
        let claims: ClaimedDelivery[] = [];
        try {
          const now = this.now();
          claims = await this.options.deliveries.claimDue({ now, leaseUntil: this.leaseFrom(now), limit, ids });
        } finally {
          this.hold("", -limit);
        }
        await Promise.all(this.run(claims, trace));
      })(),
    );
  }

  /**
   * First attempts of consecutive events, claimed by the statement that creates them: `create` gets,
   * per business of `businessIds`, how many rows it may create already leased by this process (the
   * business's and the process's room: how many rows there will be is known only to the statement;
   * the rest are created due, for this process's backlog or any instance's poller) and returns those
   * claims, attempted without being awaited, and how many rows it created due per business.
   * `traceOf` gives a claim's trace (its event's consumer span). Resolves once `create` has
   * committed; rejects if it fails.
   */
  async sendNew(
    businessIds: Iterable<string>,
    create: (lease: { leaseUntil: Date; limits: ReadonlyMap<string, number> }) => Promise<{ claims: ClaimedDelivery[]; due: ReadonlyMap<string, number> }>,
    traceOf?: (claim: ClaimedDelivery) => TraceCarrier | undefined,
  ): Promise<void> {
    // The room is held across the statement, so concurrent claims cannot all see the same room.
    const limits = new Map<string, number>();
    for (const businessId of businessIds) {
      if (limits.has(businessId)) continue;
      const limit = this.stopping ? 0 : this.roomFor(businessId);
      limits.set(businessId, limit);
      this.hold(businessId, limit);
    }
    let created: { claims: ClaimedDelivery[]; due: ReadonlyMap<string, number> } | undefined;
    try {
      created = await create({ leaseUntil: this.leaseFrom(this.now()), limits });
      // Before the room is given back: giving it back pumps the backlog.
      if (!this.stopping) for (const [businessId, due] of created.due) if (due > 0) this.backlog.set(businessId, (this.backlog.get(businessId) ?? 0) + 1);
    } finally {
      for (const [businessId, limit] of limits) this.hold(businessId, -limit);
    }
    this.run(created.claims, traceOf);
  }

  /**
   * Attempts already-claimed deliveries; each promise resolves when its attempt is recorded. `trace`:
   * the trace the attempts continue, or each claim's.
   */
  run(claims: readonly ClaimedDelivery[], trace?: TraceCarrier | ((claim: ClaimedDelivery) => TraceCarrier | undefined)): Promise<void>[] {
    return claims.map((claim) => {
      this.hold(claim.businessId, 1);
      let held = true;
      const release = () => {
        if (held) this.hold(claim.businessId, -1);
        held = false;
      };
      const carrier = typeof trace === "function" ? trace(claim) : trace;
      // The slot covers the attempt up to the receiver's answer, and the claim's room up to the end
      // of the send: the outcome is written after both are given back (its row's lease still fences
      // it), so neither a sending slot nor a business's room waits for a database write. The room did
      // until the sixth round, and with outcomes waiting up to OUTCOME_LINGER_MS to share a statement,
      // one business's 40 claims bounded its deliveries to ~1,300 /s (docs/performance.md).
      // then(fulfilled, rejected) rather than an async callback and finally(): a finally() makes two
      // promises more than a then() when it runs, and promise reactions (runMicrotasks' own time) were
      // 4.4% of webhook-delivery's busy profile samples (docs/performance.md).
      const recorded = () => {
        this.recording -= 1;
        if (this.backlog.size > 0) queueMicrotask(() => this.pump());
      };
      const attempt = this.options.limiter
        .run(claim.webhookId, () => this.attempt(claim, carrier), claim.businessId)
        .then(
          (record) => {
            release();
            if (!record) return;
            this.recording += 1;
            return record().then(recorded, (err: unknown) => {
              recorded();
              throw err;
            });
          },
          (err: unknown) => {
            release();
            throw err;
          },
        );
      return this.track(attempt);
    });
  }

  /**
   * Claims due first attempts of any business that this process has room for: those another instance
   * (or this one before a restart) created but could not take. Businesses without room for a batch
   * are left to others. Returns how many were claimed.
   */
  async pullFirstAttempts(): Promise<number> {
    if (this.stopping) return 0;
    const batch = this.batchSize();
    // A finite claim even when no bound was configured (tests that build an executor by hand).
    const room = Math.min(this.globalRoom(), 1_000);
    if (room < batch) return 0;
    // A business this process already holds claims of gets at most the rest of its bound, and none
    // (left out) when that is less than a batch.
    const held = new Map<string, number>();
    for (const businessId of this.claimsPerBusiness.keys()) {
      const left = this.roomFor(businessId);
      held.set(businessId, left < batch ? 0 : left);
    }
    this.leftOutForRoom = [...held].filter(([businessId, left]) => left === 0 && businessId !== "").map(([businessId]) => businessId);
    const now = this.now();
    const claims = await this.options.deliveries.claimFirstAttempts({
      now,
      leaseUntil: this.leaseFrom(now),
      limit: room,
      perBusiness: Math.min(room, this.maxPendingPerBusiness),
      held,
    });
    this.run(claims);
    return claims.length;
  }

  /** Whether pullFirstAttempts has room to claim a batch now (it claims nothing otherwise). */
  get canPull(): boolean {
    return !this.stopping && Math.min(this.globalRoom(), 1_000) >= this.batchSize();
  }

  /**
   * The last pull left out some business for want of room (it probably has more due), and none of
   * those has room for a batch yet: pulling now would find nothing for them. The poller keeps
   * checking this in memory rather than going back to its interval, so a process that holds all it
   * may of a business's backlog takes the next batch as soon as it has sent some, not 250 ms later
   * (scale-out: the second instance sent 650 attempts against the consuming instance's 1,357).
   */
  get waitingForRoom(): boolean {
    if (this.leftOutForRoom.length === 0) return false;
    const batch = this.batchSize();
    return this.leftOutForRoom.every((businessId) => this.roomFor(businessId) < batch);
  }

  /** Whether the last pull left out some business for want of room. */
  get leftOutBusinesses(): boolean {
    return this.leftOutForRoom.length > 0;
  }

  private batchSize(): number {
    return Math.max(1, Math.floor(Math.min(this.maxPendingPerBusiness, this.maxPending) / 4));
  }

  private roomFor(businessId: string): number {
    return Math.max(0, Math.min(this.maxPendingPerBusiness - (this.claimsPerBusiness.get(businessId) ?? 0), this.globalRoom()));
  }

  /** Claims this process may still take, none while too many outcomes wait to be written. */
  private globalRoom(): number {
    return this.recording >= MAX_OUTCOMES_WAITING ? 0 : this.maxPending - this.claims;
  }

  private hold(businessId: string, delta: number): void {
    this.claims += delta;
    const held = (this.claimsPerBusiness.get(businessId) ?? 0) + delta;
    if (held > 0) this.claimsPerBusiness.set(businessId, held);
    else this.claimsPerBusiness.delete(businessId);
    if (delta < 0 && this.backlog.size > 0) queueMicrotask(() => this.pump());
  }

  /**
   * Claims backlogged first attempts, businesses in turn, once a business has room for a useful batch
   * (a quarter of its bound): fewer, larger claims than one per finished attempt.
   */
  private pump(): void {
    if (this.pumping) {
      this.pumpAgain = true;
      return;
    }
    const batch = this.batchSize();
    const run = async (): Promise<void> => {
      do {
        this.pumpAgain = false;
        for (const [businessId, deferrals] of [...this.backlog]) {
          if (this.stopping) return;
          const room = this.roomFor(businessId);
          if (room < batch) continue;
          const now = this.now();
          const claims = await this.options.deliveries.claimDue({ now, leaseUntil: this.leaseFrom(now), limit: room, firstAttemptsOf: businessId });
          this.run(claims);
          // Its turn is used: to the back of the line, or out of it when nothing more is due and
          // nothing was deferred meanwhile.
          const latest = this.backlog.get(businessId) ?? 0;
          this.backlog.delete(businessId);
          if (claims.length === room || latest !== deferrals) this.backlog.set(businessId, latest);
        }
      } while (this.pumpAgain && this.backlog.size > 0);
    };
    this.pumping = this.track(run()).finally(() => {
      this.pumping = undefined;
    });
  }

  /** Stops taking work and waits for every attempt in flight to be recorded. */
  async drain(): Promise<void> {
    this.stopping = true;
    while (this.tasks.size > 0) await Promise.allSettled([...this.tasks]);
  }

  leaseFrom(now: Date): Date {
    return new Date(now.getTime() + this.options.leaseMs);
  }

  /** Settles (never rejects) when `task` does; a failure is logged. Forgotten by drain() once settled. */
  private track(task: Promise<void>): Promise<void> {
    // The reactions run in a later microtask, so `tracked` is in the set by then.
    const tracked: Promise<void> = task.then(
      () => {
        this.tasks.delete(tracked);
      },
      (err: unknown) => {
        this.tasks.delete(tracked);
        this.options.logger.error({ err }, "delivery attempt failed to run");
      },
    );
    this.tasks.add(tracked);
    return tracked;
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
    if (read === undefined || this.now().getTime() - read.at.getTime() > FRESH_CLAIM_MS) return undefined;
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
  private async attempt(claim: ClaimedDelivery, trace: TraceCarrier | undefined): Promise<(() => Promise<void>) | undefined> {
    const { deliveries, dispatcher, logger } = this.options;
    // Shutting down: an attempt that has not started yet is handed back rather than sent late.
    if (this.stopping) {
      await deliveries.releaseClaim(claim, this.now());
      return;
    }
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
