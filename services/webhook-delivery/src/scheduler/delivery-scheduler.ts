import type { Logger } from "@crm/logger";
import { activeTraceHeaders, type TraceCarrier } from "@crm/telemetry";
import type { AttemptExecutor } from "../application/attempt-executor";
import type { ConcurrencyLimiter } from "../outbound/concurrency";
import type { ClaimedDelivery, DeliveryRepository } from "../persistence/delivery.repository";

/**
 * Outcomes sent but not yet written at most: beyond this, nothing new is claimed until the database
 * has caught up (a slow database slows the claims instead of filling memory). A claim's room is given
 * back once its send is over, so these are not counted against the pending bounds.
 */
export const MAX_OUTCOMES_WAITING = 1_000;

export interface DeliverySchedulerOptions {
  deliveries: Pick<DeliveryRepository, "claimDue" | "claimFirstAttempts" | "releaseClaim">;
  /** Runs each attempt this scheduler gives a sending slot. */
  executor: Pick<AttemptExecutor, "attempt" | "leaseFrom">;
  limiter: ConcurrencyLimiter;
  /**
   * Claims (in flight plus waiting for a slot) one business may hold at once through first attempts;
   * its further first attempts stay due in the database and are claimed as its claims finish.
   */
  maxPendingPerBusiness?: number;
  /** Claims this process holds at most through first attempts (the retry cycle has its own bound). */
  maxPending?: number;
  /**
   * WEBHOOK_LEASE_ON_CREATE (docs/performance.md D19): sendNew's statement leases the first attempts it
   * creates; false: it leases none, and the backlog's claim takes them. On when omitted.
   */
  leaseOnCreate?: boolean;
  logger: Logger;
  now?: () => Date;
}

/**
 * Which attempts this process makes, and when: it claims (the consumer's first attempts, manual retries,
 * the first-attempt poller's and the retry cycle's claims), keeps each business within its room, keeps
 * the backlog of businesses whose first attempts wait in the database and pumps it as room frees, and
 * runs each claim under the concurrency limits through the AttemptExecutor, which makes one attempt.
 * Never throws to its callers: failures are logged, and the record stays due, so the retry cycle picks
 * it up again once its lease has run out.
 */
export class DeliveryScheduler {
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

  constructor(private readonly options: DeliverySchedulerOptions) {
    this.now = options.now ?? (() => new Date());
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
      const limit = this.stopping || this.options.leaseOnCreate === false ? 0 : this.roomFor(businessId);
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
    // No room was held, so none given back pumps the backlog: it is pumped here (D19 turned off).
    if (this.options.leaseOnCreate === false && this.backlog.size > 0) this.pump();
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
      // it), so neither a sending slot nor a business's room waits for a database write: with outcomes
      // waiting up to OUTCOME_LINGER_MS to share a statement (docs/performance.md D22), a room held until
      // the write would bound each business's deliveries to its claims per linger.
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
    return this.options.executor.leaseFrom(now);
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

  /** One claim's attempt, once it has a sending slot; shutting down, a claim not started yet is handed back rather than sent late. */
  private async attempt(claim: ClaimedDelivery, trace: TraceCarrier | undefined): Promise<(() => Promise<void>) | undefined> {
    if (this.stopping) {
      await this.options.deliveries.releaseClaim(claim, this.now());
      return;
    }
    return this.options.executor.attempt(claim, trace);
  }
}
