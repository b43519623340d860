// POST /api/v1/webhook/{id}/recover (extensions §E1.2): every FAILED delivery of that webhook created in
// [since, until) gets one new attempt at once, like a manual retry; nothing else is touched: not the
// webhook's other deliveries, not its sibling webhooks, and never another business's (Convoy #2116).
import { uuidv7 } from "@crm/contracts";
import { waitFor } from "@crm/testing";
import { api, databaseModes, inProcessBus, principal, publish, recordEvent, settled, setUpDelivery } from "./support/harness";

const HOUR = 3_600_000;

describe.each(databaseModes)("recover failed deliveries on %s", (mode) => {
  jest.setTimeout(60_000);
  const setup = setUpDelivery(mode, {
    service: { WEBHOOK_RETRY_DELAYS_MS: "50,50", WEBHOOK_RETRY_INTERVAL_MS: "50" },
    receiver: (req) => (failing.has(req.path) ? { kind: "status", status: 500, body: "down" } : { kind: "status", status: 200, body: "ok" }),
  });
  const bus = inProcessBus();
  /** Paths whose requests fail; everything else answers 200. */
  const failing = new Set<string>();

  /** A webhook whose receiver path is down, with `failed` deliveries that used all three attempts. */
  async function hookWithFailures(business: string, failed: number, event = "client.created") {
    const owner = api(setup.service, principal(business));
    const path = `/hook?w=${uuidv7()}`;
    failing.add(path);
    const hook = (await owner.post("/api/v1/webhook", { url: setup.receiver.url.replace("/hook", path), events: [event] }).expect(201)).body.data;
    await publish(
      bus,
      Array.from({ length: failed }, () => recordEvent(business, event, { id: uuidv7(), firstName: "Zoë ✓" })),
    );
    await waitFor(async () => (await setup.service.prisma.delivery.count({ where: { webhookId: hook.id, status: "FAILED" } })) === failed, 20_000, 25);
    return { hook, path, owner };
  }

  const snapshot = (webhookId: string) =>
    setup.service.prisma.delivery.findMany({ where: { webhookId }, orderBy: { id: "asc" }, select: { id: true, status: true, attempt: true, updatedAt: true, nextRetryAt: true } });

  it("re-sends each FAILED delivery in the window once, same id and body, and touches nothing else", async () => {
    const businessA = uuidv7();
    const businessB = uuidv7();
    const target = await hookWithFailures(businessA, 3);
    // Same business, another subscription (so it never receives the target's events).
    const sibling = await hookWithFailures(businessA, 1, "invoice.created");
    const foreign = await hookWithFailures(businessB, 2);

    // One of the target's failures is older than the window; one of its deliveries succeeded.
    const [first] = await snapshot(target.hook.id);
    await setup.service.prisma.delivery.update({ where: { id: first!.id }, data: { createdAt: new Date(Date.now() - 3 * HOUR) } });
    const old = (await snapshot(target.hook.id)).find((d) => d.id === first!.id);
    failing.delete(target.path);
    await publish(bus, [recordEvent(businessA, "client.created", { id: uuidv7() })]);
    await waitFor(async () => (await setup.service.prisma.delivery.count({ where: { webhookId: target.hook.id, status: "SUCCESS" } })) === 1, 10_000, 25);
    const succeeded = (await snapshot(target.hook.id)).find((d) => d.status === "SUCCESS")!;
    const siblingBefore = await snapshot(sibling.hook.id);
    const foreignBefore = await snapshot(foreign.hook.id);
    const firstBodies = new Map(setup.receiver.requests.filter((r) => r.path === target.path).map((r) => [r.headers["x-service-delivery-id"], r.rawBody]));
    const requestsBefore = setup.receiver.requests.length;

    const res = await target.owner.post(`/api/v1/webhook/${target.hook.id}/recover`, { since: new Date(Date.now() - HOUR).toISOString() }).expect(202);
    expect(res.body).toEqual({ success: true, data: { recovered: 2, remaining: 0 } });

    const recovered = await waitFor(
      async () => {
        const rows = await snapshot(target.hook.id);
        const done = rows.filter((d) => d.attempt === 4 && d.status === "SUCCESS");
        return done.length === 2 ? done : undefined;
      },
      10_000,
      25,
    );
    // Exactly one new request per recovered delivery, with the same delivery id and the same bytes.
    const sent = setup.receiver.requests.slice(requestsBefore);
    expect(sent.map((r) => r.headers["x-service-delivery-id"]).sort()).toEqual(recovered.map((d) => d.id).sort());
    for (const r of sent) {
      expect(r.path).toBe(target.path);
      expect(r.rawBody).toBe(firstBodies.get(r.headers["x-service-delivery-id"]));
    }
    const after = await snapshot(target.hook.id);
    expect(after.find((d) => d.id === old!.id)).toMatchObject({ status: "FAILED", attempt: 3, updatedAt: old!.updatedAt });
    expect(after.find((d) => d.id === succeeded.id)).toEqual(succeeded);
    expect(await snapshot(sibling.hook.id)).toEqual(siblingBefore);
    expect(await snapshot(foreign.hook.id)).toEqual(foreignBefore);
    const attempts = await setup.service.prisma.deliveryAttempt.findMany({ where: { deliveryId: recovered[0]!.id }, orderBy: { attempt: "asc" } });
    expect(attempts.map((a) => [a.attempt, a.manual, a.succeeded])).toEqual([
      [1, false, false],
      [2, false, false],
      [3, false, false],
      [4, true, true],
    ]);
  });

  /** `count` FAILED deliveries of `hook` (three attempts made), created a millisecond apart an hour ago, oldest first. */
  async function seedFailed(hook: { id: string; businessId: string }, count: number): Promise<void> {
    const tag = uuidv7();
    await setup.service.prisma.$executeRawUnsafe(
      `INSERT INTO webhooks."Payload" (id, "eventId", body, "createdAt")
       SELECT gen_random_uuid(), $1 || '-' || n, '{"n":' || n || '}', now() - interval '1 hour' + n * interval '1 millisecond' FROM generate_series(1, $2::int) AS n`,
      tag,
      count,
    );
    await setup.service.prisma.$executeRawUnsafe(
      `INSERT INTO webhooks."Delivery" (id, "webhookId", "businessId", "eventId", event, "payloadId", status, attempt, "createdAt", "updatedAt")
       SELECT gen_random_uuid(), $2::uuid, $3, p."eventId", 'client.created', p.id, 'FAILED', 3, p."createdAt", p."createdAt"
       FROM webhooks."Payload" AS p WHERE p."eventId" LIKE $1 || '-%'`,
      tag,
      hook.id,
      hook.businessId,
    );
  }

  it("re-sends at most 1,000 deliveries per call, the oldest first, and data.remaining says how many are left (issue 35 item 8)", async () => {
    const business = uuidv7();
    const owner = api(setup.service, principal(business));
    const hook = (await owner.post("/api/v1/webhook", { url: setup.receiver.url.replace("/hook", `/hook?w=${uuidv7()}`), events: ["client.created"] }).expect(201)).body.data;
    await seedFailed(hook, 1_005);
    const newest = await setup.service.prisma.delivery.findMany({ where: { webhookId: hook.id }, orderBy: [{ createdAt: "desc" }, { id: "desc" }], take: 5, select: { id: true } });
    const since = new Date(Date.now() - 2 * HOUR).toISOString();

    const first = await owner.post(`/api/v1/webhook/${hook.id}/recover`, { since }).expect(202);
    expect(first.body).toEqual({ success: true, data: { recovered: 1_000, remaining: 5 } });
    const left = await setup.service.prisma.delivery.findMany({ where: { webhookId: hook.id, status: "FAILED", attempt: 3 }, select: { id: true } });
    expect(left.map((d) => d.id).sort()).toEqual(newest.map((d) => d.id).sort());

    const second = await owner.post(`/api/v1/webhook/${hook.id}/recover`, { since }).expect(202);
    expect(second.body.data).toEqual({ recovered: 5, remaining: 0 });
    // Each sent once more, and nothing is left to recover.
    await waitFor(async () => (await setup.service.prisma.delivery.count({ where: { webhookId: hook.id, status: "SUCCESS", attempt: 4 } })) === 1_005, 60_000, 100);
    expect((await owner.post(`/api/v1/webhook/${hook.id}/recover`, { since }).expect(202)).body.data).toEqual({ recovered: 0, remaining: 0 });
  });

  it("another business can neither recover the webhook nor reach its deliveries through its own (Convoy #2116)", async () => {
    const victim = await hookWithFailures(uuidv7(), 2);
    const attackerBusiness = uuidv7();
    const attacker = await hookWithFailures(attackerBusiness, 1);
    const victimBefore = await snapshot(victim.hook.id);
    const since = new Date(Date.now() - HOUR).toISOString();

    const denied = await api(setup.service, principal(attackerBusiness)).post(`/api/v1/webhook/${victim.hook.id}/recover`, { since }).expect(404);
    expect(denied.body.error.code).toBe(404001);
    // Its own recovery, over the same window, counts and sends only its own.
    failing.delete(attacker.path);
    const own = await attacker.owner.post(`/api/v1/webhook/${attacker.hook.id}/recover`, { since }).expect(202);
    expect(own.body.data.recovered).toBe(1);
    await waitFor(async () => (await setup.service.prisma.delivery.count({ where: { webhookId: attacker.hook.id, status: "SUCCESS" } })) === 1, 10_000, 25);
    expect(await snapshot(victim.hook.id)).toEqual(victimBefore);
    // A key without webhooks.update may not recover even its own webhook.
    await api(setup.service, principal(attackerBusiness, ["webhooks.read"]))
      .post(`/api/v1/webhook/${attacker.hook.id}/recover`, { since })
      .expect(401);
  });

  it("a recovered delivery that fails again stays FAILED with no automatic retry", async () => {
    const { hook, owner } = await hookWithFailures(uuidv7(), 1);
    const res = await owner.post(`/api/v1/webhook/${hook.id}/recover`, { since: new Date(Date.now() - HOUR).toISOString(), until: new Date(Date.now() + 1000).toISOString() });
    expect(res.status).toBe(202);
    expect(res.body.data.recovered).toBe(1);
    const [failedAgain] = await waitFor(
      async () => {
        const rows = await snapshot(hook.id);
        return rows[0]?.attempt === 4 && rows[0].status === "FAILED" ? rows : undefined;
      },
      10_000,
      25,
    );
    expect(failedAgain!.nextRetryAt).toBeNull();
    // Nothing more is sent: a retry cycle claims nothing of it, and nothing is in flight.
    await settled(setup.service);
    expect((await snapshot(hook.id))[0]).toEqual(failedAgain);
    // Recovering again is a new manual attempt.
    expect((await owner.post(`/api/v1/webhook/${hook.id}/recover`, { since: new Date(Date.now() - HOUR).toISOString() }).expect(202)).body.data.recovered).toBe(1);
    await waitFor(async () => (await snapshot(hook.id))[0]?.attempt === 5, 10_000, 25);
  });

  it("counts 0 when nothing in the window failed; refuses bad windows and inactive webhooks", async () => {
    const { hook, owner } = await hookWithFailures(uuidv7(), 1);
    const now = Date.now();
    const iso = (ms: number) => new Date(ms).toISOString();
    expect((await owner.post(`/api/v1/webhook/${hook.id}/recover`, { since: iso(now - 10 * HOUR), until: iso(now - 9 * HOUR) }).expect(202)).body.data.recovered).toBe(0);

    const bad: Array<[object, string]> = [
      [{}, "since"],
      [{ since: "yesterday" }, "since"],
      [{ since: "2026-01-01" }, "since"],
      [{ since: iso(now - HOUR), until: "soon" }, "until"],
      [{ since: iso(now + HOUR) }, "since"],
      [{ since: iso(now - HOUR), until: iso(now - HOUR) }, "since"],
      [{ since: iso(now - 2 * HOUR), until: iso(now - 3 * HOUR) }, "since"],
      [{ since: iso(now - 15 * 24 * HOUR) }, "since"],
      [{ since: iso(now - HOUR), all: true }, "all"],
    ];
    for (const [body, path] of bad) {
      const res = await owner.post(`/api/v1/webhook/${hook.id}/recover`, body).expect(400);
      expect(res.body.error).toMatchObject({ code: 400001, message: "Validation failed" });
      expect(res.body.error.details[0].path).toBe(path);
    }
    // Exactly 14 days is allowed.
    await owner.post(`/api/v1/webhook/${hook.id}/recover`, { since: iso(now - 14 * 24 * HOUR), until: iso(now) }).expect(202);
    await waitFor(async () => (await snapshot(hook.id))[0]?.status === "FAILED", 10_000, 25);

    await owner.delete(`/api/v1/webhook/${hook.id}`).expect(200);
    const before = await snapshot(hook.id);
    const inactive = await owner.post(`/api/v1/webhook/${hook.id}/recover`, { since: iso(now - HOUR) }).expect(409);
    expect(inactive.body.error).toEqual({ code: 409004, message: "Delivery is not in a retryable state" });
    expect(await snapshot(hook.id)).toEqual(before);
    await owner.post(`/api/v1/webhook/${uuidv7()}/recover`, { since: iso(now - HOUR) }).expect(404);
    await owner.post(`/api/v1/webhook/not-an-id/recover`, { since: iso(now - HOUR) }).expect(404);
  });

  it("refuses a manual retry on an inactive webhook as recover does, and keeps the delivery's last answer", async () => {
    const { hook, owner } = await hookWithFailures(uuidv7(), 1);
    const [failed] = await snapshot(hook.id);
    await owner.delete(`/api/v1/webhook/${hook.id}`).expect(200);
    const before = await setup.service.prisma.delivery.findUniqueOrThrow({ where: { id: failed!.id } });
    const requestsBefore = setup.receiver.requests.length;
    // decisions §6 "Inactive webhooks receive nothing", so nothing is re-sent: 409004, as extensions §E1.2 answers.
    const refused = await owner.post(`/api/v1/webhook/${hook.id}/deliveries/${failed!.id}/retry`).expect(409);
    expect(refused.body.error).toEqual({ code: 409004, message: "Delivery is not in a retryable state" });
    await settled(setup.service);
    expect(await setup.service.prisma.delivery.findUniqueOrThrow({ where: { id: failed!.id } })).toEqual(before);
    expect(setup.receiver.requests.length).toBe(requestsBefore);
    await owner.post(`/api/v1/webhook/${hook.id}/deliveries/${uuidv7()}/retry`).expect(404);
  });
});
