// Endpoint health and opt-in auto-disable (extensions §E1.3): consecutiveFailures, lastSuccessAt,
// lastFailureAt, disabledReason, autoDisableAfter. Deliveries waiting for a retry when the webhook
// becomes inactive (auto-disable or owner) are never sent, even after a re-enable before their retry
// is due, and end FAILED; re-enabling resets the health (a webhook left disabled after its owner fixed
// it was a peer's bug).
import { uuidv7 } from "@crm/contracts";
import { waitFor } from "@crm/testing";
import { INACTIVE_WEBHOOK_MESSAGE } from "../src/application/attempt-executor";
import { api, databaseModes, inProcessBus, principal, publish, recordEvent, setUpDelivery } from "./support/harness";

/** Long enough that a test acts (deactivates, re-enables) while a delivery waits for its retry. */
const RETRY_DELAY_MS = 3000;

describe.each(databaseModes)("endpoint health and auto-disable on %s", (mode) => {
  jest.setTimeout(60_000);
  const setup = setUpDelivery(mode, {
    service: { WEBHOOK_RETRY_DELAYS_MS: `${RETRY_DELAY_MS},${RETRY_DELAY_MS}`, WEBHOOK_RETRY_INTERVAL_MS: "100" },
    receiver: (req) => (failing.has(req.path) ? { kind: "status", status: 500, body: "down" } : { kind: "status", status: 200, body: "ok" }),
  });
  const bus = inProcessBus();
  /** Paths whose requests fail; everything else answers 200. */
  const failing = new Set<string>();

  async function failingHook(body: Record<string, unknown> = {}) {
    const business = uuidv7();
    const owner = api(setup.service, principal(business));
    const path = `/hook?w=${uuidv7()}`;
    failing.add(path);
    const hook = (await owner.post("/api/v1/webhook", { url: setup.receiver.url.replace("/hook", path), events: ["client.created"], ...body }).expect(201)).body.data;
    const send = (n = 1) =>
      publish(
        bus,
        Array.from({ length: n }, () => recordEvent(business, "client.created", { id: uuidv7() })),
      );
    const read = async () => (await owner.get(`/api/v1/webhook/${hook.id}`).expect(200)).body.data;
    const deliveries = () => setup.service.prisma.delivery.findMany({ where: { webhookId: hook.id }, orderBy: { id: "asc" } });
    return { business, owner, path, hook, send, read, deliveries };
  }

  it("starts healthy, counts failed attempts, and a success resets the count", async () => {
    const h = await failingHook();
    expect(h.hook).toMatchObject({ consecutiveFailures: 0, lastSuccessAt: null, lastFailureAt: null, disabledReason: null, autoDisableAfter: null });
    await h.send(2);
    const failed = await waitFor(async () => ((await h.read()).consecutiveFailures === 2 ? h.read() : undefined), 10_000, 25);
    expect(failed).toMatchObject({ isActive: true, lastSuccessAt: null, disabledReason: null });
    expect(Date.parse(failed.lastFailureAt)).toBeLessThanOrEqual(Date.now());
    // updatedAt is the owner's changes only; health moves without it.
    expect(failed.updatedAt).toBe(h.hook.updatedAt);

    failing.delete(h.path);
    await h.send();
    const healthy = await waitFor(
      async () => {
        const hook = await h.read();
        return hook.lastSuccessAt ? hook : undefined;
      },
      10_000,
      25,
    );
    expect(healthy).toMatchObject({ consecutiveFailures: 0, lastFailureAt: failed.lastFailureAt, isActive: true });
    expect(Date.parse(healthy.lastSuccessAt)).toBeGreaterThan(Date.parse(failed.lastFailureAt));
  });

  it("auto-disables at autoDisableAfter; what waited is never sent, even after a re-enable that resets the health", async () => {
    const h = await failingHook({ autoDisableAfter: 2 });
    expect(h.hook.autoDisableAfter).toBe(2);
    // One failure recorded (its delivery waits for a retry) before the second attempt fails: outcomes
    // that finish together are recorded in one statement, which would end both FAILED at once.
    await h.send();
    await waitFor(async () => ((await h.deliveries())[0]?.status === "RETRYING" ? true : undefined), 10_000, 25);
    await h.send();
    const disabled = await waitFor(
      async () => {
        const hook = await h.read();
        return hook.isActive === false ? hook : undefined;
      },
      10_000,
      25,
    );
    expect(disabled).toMatchObject({ consecutiveFailures: 2, disabledReason: "consecutive_failures", autoDisableAfter: 2 });
    // The attempt that disabled it leaves its delivery FAILED at once; the other one still waits.
    const [a, b] = await h.deliveries();
    const trigger = [a!, b!].find((d) => d.status === "FAILED")!;
    const waiting = [a!, b!].find((d) => d.id !== trigger.id)!;
    expect(trigger).toMatchObject({ attempt: 1, responseStatus: 500, nextRetryAt: null });
    expect(waiting).toMatchObject({ status: "RETRYING", attempt: 1 });

    // Inactive: new events create nothing.
    await h.send();
    // The owner fixes the endpoint and re-enables before the waiting retry is due: health starts over.
    failing.delete(h.path);
    const enabled = (await h.owner.put(`/api/v1/webhook/${h.hook.id}`, { isActive: true }).expect(200)).body.data;
    expect(enabled).toMatchObject({ isActive: true, consecutiveFailures: 0, disabledReason: null, lastFailureAt: disabled.lastFailureAt });
    const cancelled = await waitFor(
      async () => {
        const d = (await h.deliveries()).find((x) => x.id === waiting.id);
        return d?.status === "FAILED" ? d : undefined;
      },
      RETRY_DELAY_MS + 10_000,
      50,
    );
    expect(cancelled).toMatchObject({ attempt: 1, responseStatus: 0, responseBody: INACTIVE_WEBHOOK_MESSAGE, nextRetryAt: null });
    expect(setup.receiver.requests.filter((r) => r.path === h.path)).toHaveLength(2);
    expect(await h.deliveries()).toHaveLength(2);

    // Both can still be recovered once the webhook is active again.
    const recovered = await h.owner.post(`/api/v1/webhook/${h.hook.id}/recover`, { since: new Date(Date.now() - 3_600_000).toISOString() }).expect(202);
    expect(recovered.body.data.recovered).toBe(2);
    await waitFor(async () => (await h.deliveries()).every((d) => d.status === "SUCCESS" && d.attempt === 2), 10_000, 25);
    const after = await h.read();
    expect(after).toMatchObject({ consecutiveFailures: 0, isActive: true });
    expect(after.lastSuccessAt).not.toBeNull();
  });

  it("never sends a retry that waited while its owner deactivated the webhook, and gives no disabledReason", async () => {
    const h = await failingHook();
    await h.send();
    const [waiting] = await waitFor(
      async () => {
        const rows = await h.deliveries();
        return rows[0]?.status === "RETRYING" ? rows : undefined;
      },
      10_000,
      25,
    );
    const deactivated = (await h.owner.delete(`/api/v1/webhook/${h.hook.id}`).expect(200)).body.data;
    expect(deactivated).toMatchObject({ isActive: false, disabledReason: null, consecutiveFailures: 1 });
    failing.delete(h.path);
    await h.owner.put(`/api/v1/webhook/${h.hook.id}`, { isActive: true }).expect(200);
    const cancelled = await waitFor(
      async () => {
        const d = (await h.deliveries())[0];
        return d?.status === "FAILED" ? d : undefined;
      },
      RETRY_DELAY_MS + 10_000,
      50,
    );
    expect(cancelled).toMatchObject({ id: waiting!.id, attempt: 1, responseBody: INACTIVE_WEBHOOK_MESSAGE });
    expect(setup.receiver.requests.filter((r) => r.path === h.path)).toHaveLength(1);
    // Events after the re-enable are delivered.
    await h.send();
    await waitFor(async () => (await h.deliveries()).some((d) => d.status === "SUCCESS"), 10_000, 25);
  });

  it("PUT isActive true resets the count also on an active webhook; autoDisableAfter is validated and can be cleared", async () => {
    const h = await failingHook();
    await h.send();
    await waitFor(async () => (await h.read()).consecutiveFailures === 1, 10_000, 25);
    const reset = (await h.owner.put(`/api/v1/webhook/${h.hook.id}`, { isActive: true }).expect(200)).body.data;
    expect(reset.consecutiveFailures).toBe(0);

    for (const value of [0, 1001, 2.5, "5", true]) {
      for (const res of [
        await h.owner.post("/api/v1/webhook", { url: setup.receiver.url, events: ["client.created"], autoDisableAfter: value }),
        await h.owner.put(`/api/v1/webhook/${h.hook.id}`, { autoDisableAfter: value }),
      ]) {
        expect(res.status).toBe(400);
        expect(res.body.error).toMatchObject({ code: 400001, details: [expect.objectContaining({ path: "autoDisableAfter" })] });
      }
    }
    expect((await h.owner.put(`/api/v1/webhook/${h.hook.id}`, { autoDisableAfter: 1000 }).expect(200)).body.data.autoDisableAfter).toBe(1000);
    expect((await h.owner.put(`/api/v1/webhook/${h.hook.id}`, { autoDisableAfter: null }).expect(200)).body.data.autoDisableAfter).toBeNull();
    // Read-only health fields cannot be written.
    for (const field of ["consecutiveFailures", "disabledReason", "lastSuccessAt", "lastFailureAt"]) {
      const res = await h.owner.put(`/api/v1/webhook/${h.hook.id}`, { [field]: null }).expect(400);
      expect(res.body.error.details[0].path).toBe(field);
    }
  });
});
