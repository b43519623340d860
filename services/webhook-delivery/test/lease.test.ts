// The claim's lease lives in Delivery."leaseUntil", in no index (migration
// 20261126063000_lease_off_the_indexes): a claim leaves nextRetryAt as it was and is a HOT update (no
// index entry written), the lease still fences every later write, a row in flight is not claimed
// again until its lease ends, and the API still shows the lease end as nextRetryAt while it runs.
import { uuidv7 } from "@crm/contracts";
import { waitFor } from "@crm/testing";
import type { ClaimedDelivery } from "../src/persistence/delivery.repository";
import { api, databaseModes, principal, setUpDelivery } from "./support/harness";

describe.each(databaseModes)("the claim's lease on %s", (mode) => {
  const setup = setUpDelivery(mode);
  // Each test's clock starts an hour ahead: the running instance's poller claims what is due by the
  // real clock, not these.
  let start = 0;
  beforeEach(() => {
    start = Date.now() + 3_600_000;
  });
  const at = (ms: number) => new Date(start + ms);

  async function dueRecords(count: number): Promise<{ business: string; webhookId: string; now: Date }> {
    const business = uuidv7();
    const webhookId = (
      await api(setup.service, principal(business))
        .post("/api/v1/webhook", { url: setup.receiver.url, events: ["client.created"] })
        .expect(201)
    ).body.data.id;
    const now = at(0);
    const events = Array.from({ length: count }, () => ({ eventId: uuidv7(), businessId: business, event: "client.created", payload: "{}" }));
    const created = await setup.service.deliveries.createForEvents(events, now, { leaseUntil: at(60_000), limits: new Map() });
    expect(created.claims).toHaveLength(0);
    return { business, webhookId, now };
  }

  const outcome = { responseStatus: 200, responseBody: "ok", durationMs: 1, succeeded: true, status: "SUCCESS" as const, nextRetryAt: null };
  const started = (claim: ClaimedDelivery) => ({ ...claim, ...claim.read!.send });

  it("leases without moving nextRetryAt, skips the row until the lease ends, and fences with the lease", async () => {
    const { business, webhookId, now } = await dueRecords(1);
    const lease = at(30_000);
    const [claim] = await setup.service.deliveries.claimDue({ now: at(1), leaseUntil: lease, limit: 10, firstAttemptsOf: business });
    expect(claim).toBeDefined();
    const row = await setup.service.prisma.delivery.findUniqueOrThrow({ where: { id: claim!.id } });
    expect(row).toMatchObject({ nextRetryAt: now, leaseUntil: lease });
    // The API shows when it would be retried if this instance died: the lease end.
    const listed = await api(setup.service, principal(business)).get(`/api/v1/webhook/${webhookId}/deliveries`).expect(200);
    expect(listed.body.data[0]).toMatchObject({ id: claim!.id, nextRetryAt: lease.toISOString() });

    // Held: neither kind of claim takes it while the lease runs.
    expect(await setup.service.deliveries.claimDue({ now: at(2), leaseUntil: at(40_000), limit: 10, firstAttemptsOf: business })).toHaveLength(0);
    expect(await setup.service.deliveries.claimDue({ now: at(2), leaseUntil: at(40_000), limit: 10, ids: [claim!.id] })).toHaveLength(0);
    expect(await setup.service.deliveries.claimFirstAttempts({ now: at(2), leaseUntil: at(40_000), limit: 10, perBusiness: 10, held: new Map() })).toHaveLength(0);

    // Its lease over (its instance died): taken again, and the first holder's writes no longer land.
    const taken = await setup.service.deliveries.claimFirstAttempts({ now: at(30_001), leaseUntil: at(90_000), limit: 10, perBusiness: 10, held: new Map() });
    const again = taken.find((c) => c.id === claim!.id);
    expect(again).toMatchObject({ leaseUntil: at(90_000) });
    expect(await setup.service.deliveries.startAttempt(claim!, at(95_000))).toBeNull();
    expect(await setup.service.deliveries.recordAttempt(started(claim!), outcome, at(30_002))).toBe(false);
    expect(await setup.service.deliveries.recordAttempt(started(again!), outcome, at(30_003))).toBe(true);
    expect(await setup.service.prisma.delivery.findUniqueOrThrow({ where: { id: claim!.id } })).toMatchObject({
      status: "SUCCESS",
      attempt: 1,
      nextRetryAt: null,
      leaseUntil: null,
    });
  });

  it("takes at most a held business's room, and none of a business whose room is 0", async () => {
    const held = await dueRecords(4);
    const full = await dueRecords(4);
    const other = await dueRecords(4);
    const taken = await setup.service.deliveries.claimFirstAttempts({
      now: at(1),
      leaseUntil: at(30_000),
      limit: 100,
      perBusiness: 3,
      held: new Map([
        [held.business, 2],
        [full.business, 0],
      ]),
    });
    const of = (business: string) => taken.filter((claim) => claim.businessId === business).length;
    expect([of(held.business), of(full.business), of(other.business)]).toEqual([2, 0, 3]);
  });

  it("gives a released claim back due at once, for any instance", async () => {
    const { business } = await dueRecords(1);
    const [claim] = await setup.service.deliveries.claimDue({ now: at(1), leaseUntil: at(30_000), limit: 10, firstAttemptsOf: business });
    await setup.service.deliveries.releaseClaim(claim!, at(2));
    expect(await setup.service.prisma.delivery.findUniqueOrThrow({ where: { id: claim!.id } })).toMatchObject({ nextRetryAt: at(2), leaseUntil: null });
    expect(await setup.service.deliveries.claimDue({ now: at(3), leaseUntil: at(30_000), limit: 10, firstAttemptsOf: business })).toHaveLength(1);
  });

  it("counts a retry as due (the crm_webhook_retries_due gauge) only while no attempt holds it", async () => {
    const { business } = await dueRecords(1);
    const deliveries = setup.service.deliveries;
    const [claim] = await deliveries.claimDue({ now: at(1), leaseUntil: at(30_000), limit: 10, firstAttemptsOf: business });
    const attempt = await deliveries.startAttempt(claim!, at(30_000));
    const failed = { ...outcome, responseStatus: 500, responseBody: "no", succeeded: false, status: "RETRYING" as const, nextRetryAt: at(10_000) };
    const before = await deliveries.countRetriesDue(at(10_001));
    expect(await deliveries.recordAttempt(attempt!, failed, at(2))).toBe(true);
    expect(await deliveries.countRetriesDue(at(9_999))).toBe(before);
    expect(await deliveries.countRetriesDue(at(10_001))).toBe(before + 1);
    // Claimed for its retry: nextRetryAt stays in the past, but the retry is in flight, not due.
    expect(await deliveries.claimDue({ now: at(10_001), leaseUntil: at(40_000), limit: 10, ids: [claim!.id] })).toHaveLength(1);
    expect(await deliveries.countRetriesDue(at(10_002))).toBe(before);
    expect(await deliveries.countRetriesDue(at(40_001))).toBe(before + 1);
  });

  it("claims and renews leases as HOT updates: no index entry written", async () => {
    const counts = async () => {
      await setup.service.prisma.$executeRawUnsafe("SELECT pg_stat_force_next_flush()");
      const [row] = await setup.service.prisma.$queryRawUnsafe<Array<{ upd: number; hot: number }>>(
        `SELECT n_tup_upd::int AS upd, n_tup_hot_upd::int AS hot FROM pg_stat_user_tables WHERE schemaname = 'webhooks' AND relname = 'Delivery'`,
      );
      return row!;
    };
    // Every earlier update of this test file has reached the statistics. A backend publishes its counts
    // at most once a second after a transaction, and one left idle only after PostgreSQL's idle interval
    // (10 s): the counts must hold still for longer than that (a shorter wait flaked on a loaded machine).
    // PGlite has one backend, the one each count forces to flush first: there, still for longer than the
    // once-a-second publishing is enough (the running instance's own writes would show within it).
    const quietMs = mode === "pglite" ? 2_500 : 10_500;
    let stable = await counts();
    let stableSince = Date.now();
    const before = await waitFor(
      async () => {
        const now = await counts();
        if (now.upd !== stable.upd || now.hot !== stable.hot) {
          stable = now;
          stableSince = Date.now();
          return undefined;
        }
        return Date.now() - stableSince >= quietMs ? now : undefined;
      },
      60_000,
      500,
    );
    const { business } = await dueRecords(8);
    const claims = await setup.service.deliveries.claimDue({ now: at(1), leaseUntil: at(30_000), limit: 10, firstAttemptsOf: business });
    expect(claims).toHaveLength(8);
    for (const claim of claims.slice(0, 2)) expect(await setup.service.deliveries.startAttempt(claim, at(40_000))).not.toBeNull();
    const after = await waitFor(async () => {
      const now = await counts();
      return now.upd >= before.upd + 10 && now;
    });
    expect(after.upd - before.upd).toBe(10);
    expect(after.hot - before.hot).toBe(10);
  }, 90_000);
});
