// The outcome statement's columns travel as array literals built by the service (array-literal.ts),
// not prepared element by element by the driver: every kind of value comes back as it was sent.
import { uuidv7 } from "@crm/contracts";
import { api, databaseModes, principal, setUpDelivery } from "./support/harness";

describe.each(databaseModes)("the outcome statement's values on %s", (mode) => {
  const setup = setUpDelivery(mode);

  it("stores response bodies, instants and flags exactly", async () => {
    const business = uuidv7();
    await api(setup.service, principal(business))
      .post("/api/v1/webhook", { url: setup.receiver.url, events: ["client.created"] })
      .expect(201);
    // An hour ahead: the running instance's poller claims what is due by the real clock, not these.
    const now = new Date(Date.now() + 3_600_000);
    const leaseUntil = new Date(now.getTime() + 60_000);
    const bodies = ['{"error":"a \\"quoted\\" word"}', "back\\slash", "NULL", "", "{a,b}", "é 😀"];
    const events = bodies.map(() => ({ eventId: uuidv7(), businessId: business, event: "client.created", payload: "{}" }));
    const { claims } = await setup.service.deliveries.createForEvents(events, now, { leaseUntil, limits: new Map([[business, bodies.length]]) });
    expect(claims).toHaveLength(bodies.length);
    const at = new Date(now.getTime() + 1_234);
    const retryAt = new Date(now.getTime() + 10_567);
    const recorded = await setup.service.deliveries.recordAttempts(
      claims.map((claim, i) => ({
        started: { ...claim, ...claim.read!.send },
        outcome:
          i % 2 === 0
            ? { responseStatus: 500 + i, responseBody: bodies[i]!, durationMs: i, succeeded: false, status: "RETRYING" as const, nextRetryAt: retryAt }
            : { responseStatus: 200, responseBody: bodies[i]!, durationMs: i, succeeded: true, status: "SUCCESS" as const, nextRetryAt: null },
        at,
      })),
    );
    expect(recorded.size).toBe(bodies.length);
    for (const [i, claim] of claims.entries()) {
      const row = await setup.service.prisma.delivery.findUniqueOrThrow({ where: { id: claim.id } });
      expect(row).toMatchObject({
        attempt: 1,
        status: i % 2 === 0 ? "RETRYING" : "SUCCESS",
        responseStatus: i % 2 === 0 ? 500 + i : 200,
        responseBody: bodies[i],
        nextRetryAt: i % 2 === 0 ? retryAt : null,
        leaseUntil: null,
        updatedAt: at,
      });
      const [history] = await setup.service.deliveries.attempts(claim.id);
      expect(history).toMatchObject({ attempt: 1, manual: false, succeeded: i % 2 === 1, responseBody: bodies[i], durationMs: i, createdAt: at });
    }
  });
});
