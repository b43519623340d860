// Secret rotation with an overlap window (extensions §E1.1): during the grace period every attempt,
// retries included, carries webhook-signature with the new secret's signature first and the old one's
// second, X-Service-Signature stays on the new secret; a second rotation replaces the overlap; the old
// secret is sealed at rest like the current one, re-encrypted under a new key, and forgotten once expired.
import { Webhook as StandardWebhook } from "standardwebhooks";
import { uuidv7 } from "@crm/contracts";
import { waitFor } from "@crm/testing";
import type { WebhookDeliveryService } from "../src";
import { keyFromText } from "../src/domain/secret-keyring";
import {
  api,
  databaseModes,
  preferredMode,
  inProcessBus,
  principal,
  publish,
  recordEvent,
  startReceiver,
  startService,
  testDatabase,
  type ReceivedRequest,
  setUpDelivery,
} from "./support/harness";
import { verifyInterfaceSignature } from "@crm/testing";

const KEY_A = "rotation-key-a-0123456789abcdef0123456789";
const KEY_B = "rotation-key-b-0123456789abcdef0123456789";

/** Whether the Standard Webhooks reference library accepts the request for this secret. */
function standardVerifies(secret: string, received: ReceivedRequest): boolean {
  try {
    new StandardWebhook(secret).verify(received.rawBody, {
      "webhook-id": received.headers["webhook-id"] as string,
      "webhook-timestamp": received.headers["webhook-timestamp"] as string,
      "webhook-signature": received.headers["webhook-signature"] as string,
    });
    return true;
  } catch {
    return false;
  }
}

function signatures(received: ReceivedRequest): string[] {
  return String(received.headers["webhook-signature"]).split(" ");
}

async function storedSecrets(service: WebhookDeliveryService, id: string) {
  const rows = await service.prisma.$queryRaw<Array<{ secret: string; previousSecret: string | null }>>`
    SELECT secret, "previousSecret" FROM "webhooks"."Webhook" WHERE id = ${id}::uuid`;
  return rows[0]!;
}

// Both ways: WEBHOOK_KEPT_SECRETS=false opens the sealed secrets at every attempt (docs/performance.md D28).
// Off runs in one mode only: the switch is about the executor, not storage, and each suite waits out its retry delays.
const keptBothWays = [...databaseModes.map((mode) => [mode, true] as const), [preferredMode, false] as const];

describe.each(keptBothWays)("rotate-secret with a grace period on %s (WEBHOOK_KEPT_SECRETS=%s)", (mode, kept) => {
  jest.setTimeout(60_000);
  // The retry waits long enough for the test to rotate the secret in between, even on a busy machine.
  const setup = setUpDelivery(mode, {
    service: { WEBHOOK_SECRET_KEYS: KEY_A, WEBHOOK_RETRY_DELAYS_MS: "4000,4000", WEBHOOK_RETRY_INTERVAL_MS: "100", WEBHOOK_KEPT_SECRETS: String(kept) },
  });
  const bus = inProcessBus();

  async function deliverOne(business: string, hookUrl: string): Promise<ReceivedRequest> {
    const before = setup.receiver.requests.filter((r) => r.path === new URL(hookUrl).pathname + new URL(hookUrl).search).length;
    await publish(bus, [recordEvent(business, "client.created", { id: uuidv7(), firstName: "Zoë ✓" })]);
    return waitFor(() => setup.receiver.requests.filter((r) => r.path === new URL(hookUrl).pathname + new URL(hookUrl).search)[before]);
  }

  it("without a body (or with 0): one signature, new secret only, previousSecretExpiresAt null", async () => {
    const business = uuidv7();
    const owner = api(setup.service, principal(business));
    const url = `${setup.receiver.url}?t=${uuidv7()}`;
    const hook = (await owner.post("/api/v1/webhook", { url, events: ["client.created"] }).expect(201)).body.data;
    expect(hook.previousSecretExpiresAt).toBeNull();
    const rotated = (await owner.post(`/api/v1/webhook/${hook.id}/rotate-secret`).expect(200)).body.data;
    expect(rotated.previousSecretExpiresAt).toBeNull();
    const zero = (await owner.post(`/api/v1/webhook/${hook.id}/rotate-secret`, { gracePeriodSeconds: 0 }).expect(200)).body.data;
    expect(zero.previousSecretExpiresAt).toBeNull();
    const received = await deliverOne(business, url);
    expect(signatures(received)).toHaveLength(1);
    expect(standardVerifies(zero.secret, received)).toBe(true);
    expect(standardVerifies(rotated.secret, received)).toBe(false);
    expect(standardVerifies(hook.secret, received)).toBe(false);
  });

  it("keeps an in-flight retry verifiable with the old secret: both signatures, new first, then old", async () => {
    const business = uuidv7();
    const owner = api(setup.service, principal(business));
    const url = `${setup.receiver.url}?t=${uuidv7()}`;
    const path = new URL(url).pathname + new URL(url).search;
    let failFirst = true;
    setup.receiver.behaviour = (req) => {
      if (req.path === path && failFirst) {
        failFirst = false;
        return { kind: "status", status: 503 };
      }
      return { kind: "status", status: 200, body: "ok" };
    };
    try {
      const hook = (await owner.post("/api/v1/webhook", { url, events: ["client.created"] }).expect(201)).body.data;
      await publish(bus, [recordEvent(business, "client.created", { id: uuidv7(), firstName: "東京 ✓" })]);
      const first = await waitFor(() => setup.receiver.requests.find((r) => r.path === path));
      expect(standardVerifies(hook.secret, first)).toBe(true);

      // Rotated while the delivery waits for its retry.
      const before = Date.now();
      const rotated = (await owner.post(`/api/v1/webhook/${hook.id}/rotate-secret`, { gracePeriodSeconds: 3600 }).expect(200)).body.data;
      const expiresAt = Date.parse(rotated.previousSecretExpiresAt);
      expect(expiresAt).toBeGreaterThanOrEqual(before + 3_600_000 - 1000);
      expect(expiresAt).toBeLessThanOrEqual(Date.now() + 3_600_000 + 1000);
      expect((await owner.get(`/api/v1/webhook/${hook.id}`).expect(200)).body.data.previousSecretExpiresAt).toBe(rotated.previousSecretExpiresAt);

      const retry = await waitFor(() => setup.receiver.requests.filter((r) => r.path === path)[1], 20_000);
      expect(retry.headers["x-service-delivery-id"]).toBe(first.headers["x-service-delivery-id"]);
      expect(retry.rawBody).toBe(first.rawBody);
      expect(signatures(retry)).toHaveLength(2);
      // The receiver still on the old secret and the one already on the new secret both verify.
      expect(standardVerifies(hook.secret, retry)).toBe(true);
      expect(standardVerifies(rotated.secret, retry)).toBe(true);
      // Order: new first. A library given only the first signature verifies with the new secret.
      expect(standardVerifies(rotated.secret, { ...retry, headers: { ...retry.headers, "webhook-signature": signatures(retry)[0] } })).toBe(true);
      expect(standardVerifies(hook.secret, { ...retry, headers: { ...retry.headers, "webhook-signature": signatures(retry)[1] } })).toBe(true);
      // The interface's own signature is on the new secret only (decisions §6 unchanged).
      expect(verifyInterfaceSignature(rotated.secret, retry.rawBody, retry.headers["x-service-signature"] as string)).toBe(true);
      expect(verifyInterfaceSignature(hook.secret, retry.rawBody, retry.headers["x-service-signature"] as string)).toBe(false);
    } finally {
      setup.receiver.behaviour = { kind: "status", status: 200, body: "ok" };
    }
  });

  it("a second rotation replaces the overlap: only the secret rotated away most recently is still valid", async () => {
    const business = uuidv7();
    const owner = api(setup.service, principal(business));
    const url = `${setup.receiver.url}?t=${uuidv7()}`;
    const first = (await owner.post("/api/v1/webhook", { url, events: ["client.created"] }).expect(201)).body.data;
    const second = (await owner.post(`/api/v1/webhook/${first.id}/rotate-secret`, { gracePeriodSeconds: 600 }).expect(200)).body.data;
    const third = (await owner.post(`/api/v1/webhook/${first.id}/rotate-secret`, { gracePeriodSeconds: 600 }).expect(200)).body.data;
    const overlapping = await deliverOne(business, url);
    expect(signatures(overlapping)).toHaveLength(2);
    expect(standardVerifies(third.secret, overlapping)).toBe(true);
    expect(standardVerifies(second.secret, overlapping)).toBe(true);
    expect(standardVerifies(first.secret, overlapping)).toBe(false);

    // A rotation without a grace period ends any overlap at once.
    const fourth = (await owner.post(`/api/v1/webhook/${first.id}/rotate-secret`, {}).expect(200)).body.data;
    expect(fourth.previousSecretExpiresAt).toBeNull();
    const after = await deliverOne(business, url);
    expect(signatures(after)).toHaveLength(1);
    expect(standardVerifies(fourth.secret, after)).toBe(true);
    expect(standardVerifies(third.secret, after)).toBe(false);
  });

  it("stops signing with the old secret when the grace period ends", async () => {
    const business = uuidv7();
    const owner = api(setup.service, principal(business));
    const url = `${setup.receiver.url}?t=${uuidv7()}`;
    const hook = (await owner.post("/api/v1/webhook", { url, events: ["client.created"] }).expect(201)).body.data;
    const rotated = (await owner.post(`/api/v1/webhook/${hook.id}/rotate-secret`, { gracePeriodSeconds: 1 }).expect(200)).body.data;
    expect(Date.parse(rotated.previousSecretExpiresAt) - Date.now()).toBeGreaterThan(0);
    expect(Date.parse(rotated.previousSecretExpiresAt) - Date.now()).toBeLessThanOrEqual(1_000);
    // The grace period ends without waiting it out: the moment it ends is the one the row holds, and
    // every use of the previous secret compares that moment with the clock (the database's, the view's).
    await setup.service.prisma.$executeRaw`
      UPDATE "webhooks"."Webhook" SET "previousSecretExpiresAt" = now() - interval '1 millisecond' WHERE id = ${hook.id}::uuid`;
    expect((await owner.get(`/api/v1/webhook/${hook.id}`).expect(200)).body.data.previousSecretExpiresAt).toBeNull();
    const received = await deliverOne(business, url);
    expect(signatures(received)).toHaveLength(1);
    expect(standardVerifies(rotated.secret, received)).toBe(true);
    expect(standardVerifies(hook.secret, received)).toBe(false);
  });

  it("refuses a grace period that is not an integer from 0 to 604800, and unknown fields, changing nothing", async () => {
    const business = uuidv7();
    const owner = api(setup.service, principal(business));
    const hook = (await owner.post("/api/v1/webhook", { url: setup.receiver.url, events: ["client.created"] }).expect(201)).body.data;
    const stored = await storedSecrets(setup.service, hook.id);
    for (const body of [{ gracePeriodSeconds: -1 }, { gracePeriodSeconds: 604_801 }, { gracePeriodSeconds: 1.5 }, { gracePeriodSeconds: "60" }, { gracePeriodSeconds: null }]) {
      const res = await owner.post(`/api/v1/webhook/${hook.id}/rotate-secret`, body).expect(400);
      expect(res.body.error).toMatchObject({ code: 400001, details: [expect.objectContaining({ path: "gracePeriodSeconds" })] });
    }
    const unknown = await owner.post(`/api/v1/webhook/${hook.id}/rotate-secret`, { graceSeconds: 5 }).expect(400);
    expect(unknown.body.error.details[0].path).toBe("graceSeconds");
    expect(await storedSecrets(setup.service, hook.id)).toEqual(stored);
    const max = (await owner.post(`/api/v1/webhook/${hook.id}/rotate-secret`, { gracePeriodSeconds: 604_800 }).expect(200)).body.data;
    expect(Date.parse(max.previousSecretExpiresAt) - Date.now()).toBeGreaterThan(604_790_000);
    // Another business's webhook: 404001, as every webhook route.
    await api(setup.service, principal(uuidv7())).post(`/api/v1/webhook/${hook.id}/rotate-secret`, { gracePeriodSeconds: 60 }).expect(404);
  });
});

describe.each(databaseModes)("the rotated-away secret at rest on %s", (mode) => {
  jest.setTimeout(60_000);

  it("is sealed, moves to a new WEBHOOK_SECRET_KEYS key with the current one, and keeps signing", async () => {
    const db = await testDatabase(mode);
    const receiver = await startReceiver();
    const bus = inProcessBus();
    let service = await startService(db, { WEBHOOK_SECRET_KEYS: KEY_A });
    try {
      const business = uuidv7();
      let owner = api(service, principal(business));
      const hook = (await owner.post("/api/v1/webhook", { url: receiver.url, events: ["client.created"] }).expect(201)).body.data;
      const rotated = (await owner.post(`/api/v1/webhook/${hook.id}/rotate-secret`, { gracePeriodSeconds: 3600 }).expect(200)).body.data;
      const sealed = await storedSecrets(service, hook.id);
      for (const value of [sealed.secret, sealed.previousSecret!]) {
        expect(value.startsWith(`v1:${keyFromText(KEY_A).id}:`)).toBe(true);
        expect(value).not.toContain(hook.secret.slice(6));
        expect(value).not.toContain(rotated.secret.slice(6));
      }
      await service.stop();

      service = await startService(db, { WEBHOOK_SECRET_KEYS: `${KEY_B},${KEY_A}` });
      owner = api(service, principal(business));
      const moved = await waitFor(async () => {
        const now = await storedSecrets(service, hook.id);
        return now.previousSecret?.startsWith(`v1:${keyFromText(KEY_B).id}:`) && now.secret.startsWith(`v1:${keyFromText(KEY_B).id}:`) ? now : undefined;
      });
      expect(moved.previousSecret).not.toBe(sealed.previousSecret);
      await publish(bus, [recordEvent(business, "client.created", { id: uuidv7() })]);
      const received = await waitFor(() => receiver.requests[0]);
      expect(standardVerifies(rotated.secret, received)).toBe(true);
      expect(standardVerifies(hook.secret, received)).toBe(true);
    } finally {
      await service.stop();
      await receiver.close();
      await db.drop();
    }
  });

  it("is forgotten by the re-encryption job once its grace period is over", async () => {
    const db = await testDatabase(mode);
    let service = await startService(db, { WEBHOOK_SECRET_KEYS: KEY_A });
    try {
      const owner = api(service, principal(uuidv7()));
      const hook = (await owner.post("/api/v1/webhook", { url: "https://example.com/hook", events: ["client.created"] }).expect(201)).body.data;
      await owner.post(`/api/v1/webhook/${hook.id}/rotate-secret`, { gracePeriodSeconds: 3600 }).expect(200);
      expect((await storedSecrets(service, hook.id)).previousSecret).not.toBeNull();
      // The grace period ends by moving the moment the row holds, not by a clock: an instance whose
      // clock ran behind had its own periodic run of the job forget the secret before the check above.
      await service.prisma.$executeRaw`
        UPDATE "webhooks"."Webhook" SET "previousSecretExpiresAt" = now() - interval '1 millisecond' WHERE id = ${hook.id}::uuid`;
      await service.stop();
      // The job runs once at start.
      service = await startService(db, { WEBHOOK_SECRET_KEYS: KEY_A });
      await waitFor(async () => (await storedSecrets(service, hook.id)).previousSecret === null);
    } finally {
      await service.stop();
      await db.drop();
    }
  });
});
