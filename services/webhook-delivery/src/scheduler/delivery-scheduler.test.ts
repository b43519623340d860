import { createLogger } from "@crm/logger";
import { waitFor } from "@crm/testing";
import type { SecretKeyring } from "../domain/secret-keyring";
import { createConcurrencyLimiter } from "../outbound/concurrency";
import type { Dispatcher } from "../outbound/dispatcher";
import type { ClaimedDelivery, DeliveryRepository } from "../persistence/delivery.repository";
import { AttemptExecutor } from "../application/attempt-executor";
import { DeliveryScheduler, MAX_OUTCOMES_WAITING } from "./delivery-scheduler";

const logger = createLogger({ service: "test", level: "silent" });
/**
 * The clock of the scheduler and its executor, stopped where the claims were read: every claim stays fresh (FRESH_CLAIM_MS)
 * however long it waits for a sending slot, so no attempt goes to the repository's startAttempt, which
 * these fakes do not have (on a loaded machine 1,000 claims through 20 slots took longer than 1 s).
 */
const CLAIMED_AT = new Date();

/** Deliveries whose outcome statements wait until `release()`; every send answers 200 at once. */
function schedulerWithHeldOutcomes(bounds: { maxPending: number; maxPendingPerBusiness: number }) {
  const written: string[] = [];
  let release: () => void = () => undefined;
  const outcomesWritten = new Promise<void>((resolve) => {
    release = resolve;
  });
  const deliveries = {
    recordAttempts: async (items: ReadonlyArray<{ started: { id: string } }>) => {
      await outcomesWritten;
      for (const item of items) written.push(item.started.id);
      return new Set(items.map((item) => item.started.id));
    },
  } as unknown as DeliveryRepository;
  return { scheduler: schedulerOver(deliveries, bounds), written, release: () => release() };
}

/** A scheduler and its executor over fake `deliveries`, on the stopped clock; every send answers 200 at once. */
function schedulerOver(deliveries: DeliveryRepository, options: { maxPending: number; maxPendingPerBusiness: number; leaseOnCreate?: boolean }): DeliveryScheduler {
  const dispatcher = { send: async () => ({ ok: true, responseStatus: 200, responseBody: "", durationMs: 1 }) } as unknown as Dispatcher;
  const keyring = { open: (_id: string, stored: string) => stored } as unknown as SecretKeyring;
  const freshClaims = options.leaseOnCreate;
  return new DeliveryScheduler({
    deliveries,
    executor: new AttemptExecutor({
      deliveries,
      dispatcher,
      keyring,
      retryDelaysMs: [1000],
      leaseMs: 60_000,
      ...(freshClaims === undefined ? {} : { freshClaims }),
      logger,
      now: () => CLAIMED_AT,
    }),
    limiter: createConcurrencyLimiter({ maxInFlight: 50, maxPerKey: 2, maxPerGroup: 20 }),
    logger,
    now: () => CLAIMED_AT,
    ...options,
  });
}

function claims(count: number, businessId: string): ClaimedDelivery[] {
  const now = CLAIMED_AT;
  return Array.from({ length: count }, (_, i) => ({
    id: `${businessId}-${i}`,
    webhookId: `${businessId}-hook-${i % 10}`,
    businessId,
    attempt: 0,
    leaseUntil: new Date(now.getTime() + 60_000),
    read: {
      at: now,
      send: { event: "client.created", payload: "{}", manualRetry: false, url: "http://127.0.0.1:9/", secret: "whsec_c2VjcmV0", previousSecret: null, webhookActive: true },
    },
  }));
}

/** Turns of the event loop until `check` holds; bounded, so a broken scheduler fails the test instead of hanging it. */
async function until(check: () => boolean, maxTurns = 100_000): Promise<void> {
  for (let turn = 0; !check(); turn++) {
    if (turn >= maxTurns) throw new Error(`still false after ${maxTurns} turns of the event loop`);
    await new Promise((resolve) => setImmediate(resolve));
  }
}

describe("DeliveryScheduler's room", () => {
  it("gives a claim's room back once its send is over, before its outcome is written", async () => {
    const { scheduler, written, release } = schedulerWithHeldOutcomes({ maxPending: 10, maxPendingPerBusiness: 4 });
    const done = scheduler.run(claims(4, "b"));
    // All four sent, none written: the business may claim its next four already.
    await until(() => scheduler.pending === 0);
    expect(written).toEqual([]);
    expect(scheduler.canPull).toBe(true);
    release();
    await Promise.all(done);
    expect(written.sort()).toEqual(["b-0", "b-1", "b-2", "b-3"]);
  });

  it(`claims nothing more while ${MAX_OUTCOMES_WAITING} outcomes wait to be written`, async () => {
    const { scheduler, release } = schedulerWithHeldOutcomes({ maxPending: 2_000, maxPendingPerBusiness: 2_000 });
    const done = scheduler.run(claims(MAX_OUTCOMES_WAITING, "b"));
    await until(() => scheduler.pending === 0);
    expect(scheduler.canPull).toBe(false);
    release();
    await Promise.all(done);
    expect(scheduler.canPull).toBe(true);
  });
});

describe("DeliveryScheduler's poll of first attempts", () => {
  it("claims at most the room left of a business it already holds claims of, none when that is less than a batch", async () => {
    let asked: { perBusiness: number; held: ReadonlyMap<string, number> } | undefined;
    const deliveries = {
      claimFirstAttempts: async (options: { perBusiness: number; held: ReadonlyMap<string, number> }) => {
        asked = options;
        return [];
      },
    } as unknown as DeliveryRepository;
    // Sends that never answer: the claims below stay held.
    const dispatcher = { send: () => new Promise(() => undefined) } as unknown as Dispatcher;
    const keyring = { open: (_id: string, stored: string) => stored } as unknown as SecretKeyring;
    const scheduler = new DeliveryScheduler({
      deliveries,
      executor: new AttemptExecutor({ deliveries, dispatcher, keyring, retryDelaysMs: [1000], leaseMs: 60_000, logger, now: () => CLAIMED_AT }),
      limiter: createConcurrencyLimiter({ maxInFlight: 50, maxPerKey: 2, maxPerGroup: 20 }),
      logger,
      now: () => CLAIMED_AT,
      // Batches of 2 (a quarter of the per-business bound).
      maxPending: 100,
      maxPendingPerBusiness: 8,
    });
    scheduler.run(claims(5, "b"));
    scheduler.run(claims(7, "c"));
    await scheduler.pullFirstAttempts();
    expect(asked?.perBusiness).toBe(8);
    expect([...(asked?.held ?? [])]).toEqual([
      ["b", 3],
      ["c", 0],
    ]);
    expect(scheduler.leftOutBusinesses).toBe(true);
  });
});

// Both ways: WEBHOOK_LEASE_ON_CREATE=false creates first attempts due and claims them apart (docs/performance.md D19).
describe.each([true, false])("DeliveryScheduler's first attempts of new events (WEBHOOK_LEASE_ON_CREATE=%s)", (leaseOnCreate) => {
  it("sends each once, leased by the statement that creates them and as it read them (switched off: claimed, then started, by statements of their own)", async () => {
    const created = claims(3, "b");
    const asked = { limits: [] as number[], claimDue: [] as Array<string | undefined>, started: [] as string[] };
    const written: string[] = [];
    const deliveries = {
      claimDue: async (options: { limit: number; firstAttemptsOf?: string }) => {
        asked.claimDue.push(options.firstAttemptsOf);
        return created.slice(0, options.limit);
      },
      startAttempt: async (claim: ClaimedDelivery, leaseUntil: Date) => {
        asked.started.push(claim.id);
        return { ...claim, ...claim.read!.send, leaseUntil, read: undefined };
      },
      recordAttempts: async (items: ReadonlyArray<{ started: { id: string } }>) => {
        for (const item of items) written.push(item.started.id);
        return new Set(items.map((item) => item.started.id));
      },
    } as unknown as DeliveryRepository;
    const scheduler = schedulerOver(deliveries, { maxPending: 100, maxPendingPerBusiness: 40, leaseOnCreate });

    await scheduler.sendNew(["b"], async (lease) => {
      const limit = lease.limits.get("b") ?? 0;
      asked.limits.push(limit);
      return { claims: created.slice(0, limit), due: new Map(limit < created.length ? [["b", created.length - limit]] : []) };
    });
    // Bounded: a first attempt nobody claims would otherwise hang the test.
    await waitFor(() => written.length === created.length, 5_000, 5);

    expect(asked.limits).toEqual([leaseOnCreate ? 40 : 0]);
    expect(asked.claimDue).toEqual(leaseOnCreate ? [] : ["b"]);
    expect(asked.started.sort()).toEqual(leaseOnCreate ? [] : ["b-0", "b-1", "b-2"]);
    expect(written.sort()).toEqual(["b-0", "b-1", "b-2"]);
  });
});
