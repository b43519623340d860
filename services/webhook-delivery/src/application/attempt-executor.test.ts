import { createLogger } from "@crm/logger";
import type { SecretKeyring } from "../domain/secret-keyring";
import { createConcurrencyLimiter } from "../outbound/concurrency";
import type { Dispatcher } from "../outbound/dispatcher";
import type { ClaimedDelivery, DeliveryRepository } from "../persistence/delivery.repository";
import { AttemptExecutor, MAX_OUTCOMES_WAITING } from "./attempt-executor";

const logger = createLogger({ service: "test", level: "silent" });
/**
 * The executor's clock, stopped where the claims were read: every claim stays fresh (FRESH_CLAIM_MS)
 * however long it waits for a sending slot, so no attempt goes to the repository's startAttempt, which
 * these fakes do not have (on a loaded machine 1,000 claims through 20 slots took longer than 1 s).
 */
const CLAIMED_AT = new Date();

/** Deliveries whose outcome statements wait until `release()`; every send answers 200 at once. */
function executorWithHeldOutcomes(bounds: { maxPending: number; maxPendingPerBusiness: number }) {
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
  const dispatcher = { send: async () => ({ ok: true, responseStatus: 200, responseBody: "", durationMs: 1 }) } as unknown as Dispatcher;
  const keyring = { open: (_id: string, stored: string) => stored } as unknown as SecretKeyring;
  const executor = new AttemptExecutor({
    deliveries,
    dispatcher,
    limiter: createConcurrencyLimiter({ maxInFlight: 50, maxPerKey: 2, maxPerGroup: 20 }),
    keyring,
    retryDelaysMs: [1000],
    leaseMs: 60_000,
    logger,
    now: () => CLAIMED_AT,
    ...bounds,
  });
  return { executor, written, release: () => release() };
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

async function until(check: () => boolean): Promise<void> {
  while (!check()) await new Promise((resolve) => setImmediate(resolve));
}

describe("AttemptExecutor's room", () => {
  it("gives a claim's room back once its send is over, before its outcome is written", async () => {
    const { executor, written, release } = executorWithHeldOutcomes({ maxPending: 10, maxPendingPerBusiness: 4 });
    const done = executor.run(claims(4, "b"));
    // All four sent, none written: the business may claim its next four already.
    await until(() => executor.pending === 0);
    expect(written).toEqual([]);
    expect(executor.canPull).toBe(true);
    release();
    await Promise.all(done);
    expect(written.sort()).toEqual(["b-0", "b-1", "b-2", "b-3"]);
  });

  it(`claims nothing more while ${MAX_OUTCOMES_WAITING} outcomes wait to be written`, async () => {
    const { executor, release } = executorWithHeldOutcomes({ maxPending: 2_000, maxPendingPerBusiness: 2_000 });
    const done = executor.run(claims(MAX_OUTCOMES_WAITING, "b"));
    await until(() => executor.pending === 0);
    expect(executor.canPull).toBe(false);
    release();
    await Promise.all(done);
    expect(executor.canPull).toBe(true);
  });
});

describe("AttemptExecutor's poll of first attempts", () => {
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
    const executor = new AttemptExecutor({
      deliveries,
      dispatcher,
      limiter: createConcurrencyLimiter({ maxInFlight: 50, maxPerKey: 2, maxPerGroup: 20 }),
      keyring: { open: (_id: string, stored: string) => stored } as unknown as SecretKeyring,
      retryDelaysMs: [1000],
      leaseMs: 60_000,
      logger,
      now: () => CLAIMED_AT,
      // Batches of 2 (a quarter of the per-business bound).
      maxPending: 100,
      maxPendingPerBusiness: 8,
    });
    executor.run(claims(5, "b"));
    executor.run(claims(7, "c"));
    await executor.pullFirstAttempts();
    expect(asked?.perBusiness).toBe(8);
    expect([...(asked?.held ?? [])]).toEqual([
      ["b", 3],
      ["c", 0],
    ]);
    expect(executor.leftOutBusinesses).toBe(true);
  });
});
