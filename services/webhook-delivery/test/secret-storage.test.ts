// Signing secrets at rest (issue 16 item 11): the webhooks database holds them sealed with
// AES-256-GCM under WEBHOOK_SECRET_KEYS, deliveries still verify with the secret shown once, the key
// can be rotated (new first, old second) and every row ends up re-encrypted under the new key, and a
// row under a key the service lacks fails its deliveries loudly without taking the service down.
import { Writable } from "node:stream";
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { uuidv7 } from "@crm/contracts";
import { createLogger, type Logger } from "@crm/logger";
import { describePostgres, waitFor } from "@crm/testing";
import { keyFromText, SecretKeyring } from "../src/domain/secret-keyring";
import type { WebhookDeliveryService } from "../src";
import { loadConfig } from "../src";
import { UNREADABLE_SECRET_MESSAGE } from "../src/application/attempt-executor";
import { api, databaseModes, inProcessBus, principal, publish, recordEvent, startReceiver, startService, testDatabase, type Receiver, type TestDatabase } from "./support/harness";
import { verifyInterfaceSignature } from "@crm/testing";

const KEY_A = "old-key-0123456789abcdef0123456789abcdef";
const KEY_B = "new-key-0123456789abcdef0123456789abcdef";
const KEY_C = "other-key-0123456789abcdef0123456789abcdef";
const idOf = (key: string) => keyFromText(key).id;

/** Every log line of a service, to check what is (and is not) logged. */
function capturingLogger(): { logger: Logger; lines: string[] } {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(chunk.toString("utf8"));
      done();
    },
  });
  return { logger: createLogger({ service: "webhook-delivery", level: "debug", destination }), lines };
}

type Hook = { id: string; secret: string; secretPrefix: string };

async function storedSecret(service: WebhookDeliveryService, id: string): Promise<string> {
  const rows = await service.prisma.$queryRaw<Array<{ secret: string }>>`SELECT secret FROM "webhooks"."Webhook" WHERE id = ${id}::uuid`;
  return rows[0]!.secret;
}

async function setStoredSecret(service: WebhookDeliveryService, id: string, value: string): Promise<void> {
  await service.prisma.$executeRaw`UPDATE "webhooks"."Webhook" SET secret = ${value} WHERE id = ${id}::uuid`;
}

describe.each(databaseModes)("webhook signing secrets at rest on %s", (mode) => {
  jest.setTimeout(60_000);
  let db: TestDatabase;
  let receiver: Receiver;
  const bus = inProcessBus();
  const running: WebhookDeliveryService[] = [];

  async function startWith(keys: string | undefined, logger?: Logger): Promise<WebhookDeliveryService> {
    const env: Record<string, string> = { WEBHOOK_RETRY_INTERVAL_MS: "100" };
    if (keys) env["WEBHOOK_SECRET_KEYS"] = keys;
    const service = await startService(db, env, logger ? { logger } : {});
    running.push(service);
    return service;
  }

  async function stopAll(): Promise<void> {
    for (const s of running.splice(0)) await s.stop();
  }

  /** Publishes one event for the business and returns the request the receiver got for it. */
  async function deliverOne(business: string) {
    const before = receiver.requests.length;
    await publish(bus, [recordEvent(business, "client.created", { id: uuidv7() })]);
    return waitFor(() => receiver.requests[before]);
  }

  beforeAll(async () => {
    db = await testDatabase(mode);
    receiver = await startReceiver({ kind: "status", status: 200, body: "ok" });
    // The first start creates the database (PGlite's is slow on a loaded machine); later restarts are quick.
    await startWith(KEY_A);
    await stopAll();
  }, 180_000);
  afterEach(stopAll);
  afterAll(async () => {
    await stopAll();
    await receiver?.close();
    await db?.drop();
  });

  it("stores no secret in clear, signs with the one shown at creation and after rotate-secret, logs none", async () => {
    const { logger, lines } = capturingLogger();
    const service = await startWith(KEY_A, logger);
    const business = uuidv7();
    const owner = api(service, principal(business));
    const hook: Hook = (await owner.post("/api/v1/webhook", { url: receiver.url, events: ["client.created"] }).expect(201)).body.data;
    expect(hook.secret).toMatch(/^whsec_/);

    // The whole row, but for secretPrefix: the 12 public characters every read shows (interface §2).
    const rows = await service.prisma.$queryRaw<Array<Record<string, unknown>>>`SELECT * FROM "webhooks"."Webhook" WHERE id = ${hook.id}::uuid`;
    expect(rows[0]!["secretPrefix"]).toBe(hook.secretPrefix);
    const rowText = JSON.stringify({ ...rows[0], secretPrefix: undefined });
    expect(rowText).not.toContain("whsec_");
    expect(rowText).not.toContain(hook.secret.slice(12, 24));
    expect(await storedSecret(service, hook.id)).toMatch(new RegExp(`^v1:${idOf(KEY_A)}:`));
    // What callers read never shows it either.
    expect((await owner.get(`/api/v1/webhook/${hook.id}`).expect(200)).body.data).not.toHaveProperty("secret");

    const first = await deliverOne(business);
    expect(verifyInterfaceSignature(hook.secret, first.rawBody, first.headers["x-service-signature"] as string)).toBe(true);

    const rotated: Hook = (await owner.post(`/api/v1/webhook/${hook.id}/rotate-secret`).expect(200)).body.data;
    expect(rotated.secret).toMatch(/^whsec_/);
    expect(rotated.secret).not.toBe(hook.secret);
    expect(rotated.secretPrefix).toBe(rotated.secret.slice(0, 12));
    const afterRotation = await storedSecret(service, hook.id);
    expect(afterRotation).not.toContain("whsec_");
    expect(afterRotation).not.toContain(rotated.secret.slice(6));
    const second = await deliverOne(business);
    expect(verifyInterfaceSignature(rotated.secret, second.rawBody, second.headers["x-service-signature"] as string)).toBe(true);
    expect(verifyInterfaceSignature(hook.secret, second.rawBody, second.headers["x-service-signature"] as string)).toBe(false);

    const logged = lines.join("\n");
    expect(logged).toContain("delivery attempt");
    for (const secret of [hook.secret, rotated.secret]) {
      expect(logged).not.toContain(secret);
      expect(logged).not.toContain(secret.slice(6));
    }
  });

  it("after a key rotation (new key first, old second) still signs every row and re-encrypts it under the new key", async () => {
    const before = await startWith(KEY_A);
    const business = uuidv7();
    const hooks: Hook[] = [];
    for (let i = 0; i < 3; i++) {
      hooks.push(
        (
          await api(before, principal(business))
            .post("/api/v1/webhook", { url: receiver.url, events: ["client.created"] })
            .expect(201)
        ).body.data,
      );
    }
    // A row from before this change: the secret in clear.
    await setStoredSecret(before, hooks[2]!.id, hooks[2]!.secret);
    const updatedAt = (await api(before, principal(business)).get(`/api/v1/webhook/${hooks[0]!.id}`).expect(200)).body.data.updatedAt;
    await stopAll();

    const { logger, lines } = capturingLogger();
    const service = await startWith(`${KEY_B},${KEY_A}`, logger);
    // The start-up run re-encrypts everything: nothing left under the old key or in clear.
    await waitFor(async () => {
      const counts = await service.secretReencryption.counts();
      return Object.keys(counts).length === 1 && counts[idOf(KEY_B)]! >= 3;
    });
    for (const hook of hooks) expect(await storedSecret(service, hook.id)).toMatch(new RegExp(`^v1:${idOf(KEY_B)}:`));
    expect(lines.join("\n")).toContain("older WEBHOOK_SECRET_KEYS entries can be removed");
    // Re-encryption is not a change of the webhook.
    expect((await api(service, principal(business)).get(`/api/v1/webhook/${hooks[0]!.id}`).expect(200)).body.data.updatedAt).toBe(updatedAt);

    // Rows still under the old key or in clear (e.g. written by an instance not yet restarted) sign too.
    await setStoredSecret(service, hooks[0]!.id, new SecretKeyring([KEY_A]).seal(hooks[0]!.id, hooks[0]!.secret));
    await setStoredSecret(service, hooks[1]!.id, hooks[1]!.secret);
    const start = receiver.requests.length;
    await publish(bus, [recordEvent(business, "client.created", { id: uuidv7() })]);
    await waitFor(() => receiver.requests.length >= start + 3 && true);
    const received = receiver.requests.slice(start);
    for (const hook of hooks) {
      expect(received.some((r) => verifyInterfaceSignature(hook.secret, r.rawBody, r.headers["x-service-signature"] as string))).toBe(true);
    }
    expect(await service.secretReencryption.runNow()).toBe(2);
    expect(await service.secretReencryption.counts()).toEqual({ [idOf(KEY_B)]: expect.any(Number) });
    expect(lines.join("\n")).not.toContain('"level":50');
  });

  it("fails a delivery whose secret is under an unknown key, loudly and without crashing", async () => {
    const { logger, lines } = capturingLogger();
    const service = await startWith(KEY_C, logger);
    const business = uuidv7();
    const owner = api(service, principal(business));
    const lost: Hook = (await owner.post("/api/v1/webhook", { url: receiver.url, events: ["client.created"] }).expect(201)).body.data;
    // Sealed with a key this service was never given (e.g. removed from WEBHOOK_SECRET_KEYS too early).
    await setStoredSecret(service, lost.id, new SecretKeyring([KEY_A]).seal(lost.id, lost.secret));
    const fine: Hook = (await owner.post("/api/v1/webhook", { url: receiver.url, events: ["client.created"] }).expect(201)).body.data;

    const start = receiver.requests.length;
    await publish(bus, [recordEvent(business, "client.created", { id: uuidv7() })]);
    const failed = await waitFor(async () => {
      const list = (await owner.get(`/api/v1/webhook/${lost.id}/deliveries`).expect(200)).body.data;
      return list[0]?.status === "FAILED" ? list[0] : undefined;
    });
    expect(failed).toMatchObject({ responseStatus: 0, responseBody: UNREADABLE_SECRET_MESSAGE, nextRetryAt: null });
    // The other webhook is served as usual; nothing was sent for the unreadable one.
    const delivered = await waitFor(() => receiver.requests.slice(start).find((r) => r.rawBody.length > 0));
    expect(verifyInterfaceSignature(fine.secret, delivered.rawBody, delivered.headers["x-service-signature"] as string)).toBe(true);
    expect(receiver.requests.slice(start).some((r) => verifyInterfaceSignature(lost.secret, r.rawBody, r.headers["x-service-signature"] as string))).toBe(false);

    const errors = lines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l["level"] === 50);
    expect(errors).toEqual(expect.arrayContaining([expect.objectContaining({ webhookId: lost.id, keyId: idOf(KEY_A), reason: "unknown-key" })]));
    // The re-encryption pass reports it too, and leaves the row as it is.
    await service.secretReencryption.runNow();
    expect(lines.join("\n")).toContain("sealed with keys missing from WEBHOOK_SECRET_KEYS");
    expect(await storedSecret(service, lost.id)).toMatch(new RegExp(`^v1:${idOf(KEY_A)}:`));
    expect((await fetch(`${service.url}/healthz`)).status).toBe(200);
  });

  it("generates the key under DATA_DIR when WEBHOOK_SECRET_KEYS is unset, and keeps it across restarts", async () => {
    const first = await startWith(undefined);
    const business = uuidv7();
    const hook: Hook = (
      await api(first, principal(business))
        .post("/api/v1/webhook", { url: receiver.url, events: ["client.created"] })
        .expect(201)
    ).body.data;
    await stopAll();
    const file = path.join(db.env["DATA_DIR"]!, "secrets", "webhook-secret-key");
    expect(existsSync(file)).toBe(true);
    const restarted = await startWith(undefined);
    expect(await storedSecret(restarted, hook.id)).toMatch(new RegExp(`^v1:${idOf(readFileSync(file, "utf8").trim())}:`));
    const received = await deliverOne(business);
    expect(verifyInterfaceSignature(hook.secret, received.rawBody, received.headers["x-service-signature"] as string)).toBe(true);
  });
});

describePostgres("secret re-encryption with two instances on one PostgreSQL database", () => {
  jest.setTimeout(30_000);
  let db: TestDatabase;

  beforeAll(async () => {
    db = await testDatabase("postgres");
  });
  afterAll(async () => {
    await db?.drop();
  });

  it("re-encrypts every row once, under the new key, without errors", async () => {
    const old = await startService(db, { WEBHOOK_SECRET_KEYS: KEY_A });
    const business = uuidv7();
    const hooks: Hook[] = [];
    for (let i = 0; i < 250; i++) {
      hooks.push(
        (
          await api(old, principal(business))
            .post("/api/v1/webhook", { url: "https://example.com/hook", events: ["client.created"] })
            .expect(201)
        ).body.data,
      );
    }
    await old.stop();

    const one = capturingLogger();
    const two = capturingLogger();
    const env = { WEBHOOK_SECRET_KEYS: `${KEY_B},${KEY_A}` };
    const [a, b] = await Promise.all([startService(db, env, { logger: one.logger }), startService(db, env, { logger: two.logger })]);
    try {
      await Promise.all([a.secretReencryption.runNow(), b.secretReencryption.runNow()]);
      expect(await a.secretReencryption.counts()).toEqual({ [idOf(KEY_B)]: 250 });
      const ring = new SecretKeyring([KEY_B]);
      for (const hook of hooks) expect(ring.open(hook.id, await storedSecret(a, hook.id))).toBe(hook.secret);
      const errors = [...one.lines, ...two.lines].filter((l) => l.includes('"level":50'));
      expect(errors).toEqual([]);
    } finally {
      await a.stop();
      await b.stop();
    }
  });
});

describe("WEBHOOK_SECRET_KEYS", () => {
  it.each([
    ["a key shorter than 32 characters", "too-short"],
    ["a short older key", `${KEY_A},short`],
    ["a key listed twice", `${KEY_A},${KEY_A}`],
    ["no key at all", " , "],
  ])("stops start-up on %s with one line naming the variable", (_name, value) => {
    expect(() => loadConfig({ WEBHOOK_SECRET_KEYS: value })).toThrow(/^Invalid configuration: WEBHOOK_SECRET_KEYS/);
  });

  it("takes a comma list, the first key first", () => {
    expect(loadConfig({ WEBHOOK_SECRET_KEYS: ` ${KEY_B} , ${KEY_A} ` }).WEBHOOK_SECRET_KEYS).toEqual([KEY_B, KEY_A]);
  });
});
