import type { Request } from "express";
import { randomUUID } from "node:crypto";
import { MemoryKvStore, RedisKvStore, type KvStore } from "@crm/kv-store";
import { testInfra } from "@crm/testing";
import { type IdempotencyCaller, IdempotencyStore, MAX_KEPT_RESPONSE_BYTES } from "./idempotency";

const SECRET = "idempotency-test-secret-0123456789abcdef";

function req(key: string | undefined, body: string, url = "/api/v1/client"): Request {
  return {
    method: "POST",
    originalUrl: url,
    rawBody: Buffer.from(body),
    get: (name: string) => (name.toLowerCase() === "idempotency-key" ? key : undefined),
  } as unknown as Request;
}

/** A signed-in user of business `businessId` (the tests' usual caller). */
const user = (businessId = "b1", userId = "u1"): IdempotencyCaller => ({ businessId, userId, apiKeyId: null });
/** An API key of business `businessId`, created by user u1. */
const apiKey = (businessId = "b1", apiKeyId = "k1"): IdempotencyCaller => ({ businessId, userId: "u1", apiKeyId });

const answer = (status: number, body: string) => ({ status, headers: { "content-type": "application/json" }, body: Buffer.from(body) });

async function first(store: IdempotencyStore, request: Request, caller: IdempotencyCaller = user()) {
  const outcome = await store.begin(request, caller);
  if (!outcome || !("proceed" in outcome)) throw new Error("expected to proceed");
  return outcome;
}

/** A store whose writes (`set`, and `setIfAbsent` when told) fail, as Redis does when it is out of memory or gone. */
function failingWrites(inner: KvStore, options: { setIfAbsent?: boolean; del?: boolean } = {}): KvStore & { failing: boolean } {
  const store = Object.create(inner) as KvStore & { failing: boolean };
  store.failing = true;
  const fail = () => Promise.reject(new Error("OOM command not allowed when used memory > 'maxmemory'"));
  store.set = (...args) => (store.failing ? fail() : inner.set(...args));
  store.setIfAbsent = (...args) => (store.failing && options.setIfAbsent ? fail() : inner.setIfAbsent(...args));
  store.del = (...args) => (store.failing && options.del ? fail() : inner.del(...args));
  return store;
}

/** Whether a stored value shows a secret in clear, also inside a base64 (or base64url) encoded field. */
function revealsSecret(raw: string): boolean {
  const secret = /svc_|whsec_|correct-horse/;
  const strings: string[] = [raw];
  const walk = (v: unknown): void => {
    if (typeof v === "string") strings.push(v);
    else if (v && typeof v === "object") Object.values(v).forEach(walk);
  };
  try {
    walk(JSON.parse(raw));
  } catch {
    /* not JSON: the raw text alone */
  }
  return strings.some((s) => secret.test(s) || secret.test(Buffer.from(s, "base64").toString("latin1")) || secret.test(Buffer.from(s, "base64url").toString("latin1")));
}

describe("IdempotencyStore", () => {
  it("does nothing without the header", async () => {
    expect(await new IdempotencyStore(new MemoryKvStore(), SECRET).begin(req(undefined, "{}"), user("b1"))).toBeUndefined();
  });

  it("replays the first answer for the same request, per business", async () => {
    const store = new IdempotencyStore(new MemoryKvStore(), SECRET);
    await (await first(store, req("k1", '{"a":1}'))).proceed(answer(201, '{"id":1}'));
    const again = await store.begin(req("k1", '{"a":1}'), user("b1"));
    expect(again && "replay" in again && again.replay.body.toString()).toBe('{"id":1}');
    expect(again && "replay" in again && again.replay.headers["idempotent-replayed"]).toBe("true");
    const otherBusiness = await store.begin(req("k1", '{"a":1}'), user("b2"));
    expect(otherBusiness && "proceed" in otherBusiness).toBe(true);
  });

  it("refuses the same key with a different request (409002)", async () => {
    const store = new IdempotencyStore(new MemoryKvStore(), SECRET);
    await (await first(store, req("k1", '{"a":1}'))).proceed(answer(201, "{}"));
    await expect(store.begin(req("k1", '{"a":2}'), user("b1"))).rejects.toMatchObject({ code: 409002 });
    await expect(store.begin(req("k1", '{"a":1}', "/api/v1/invoice"), user("b1"))).rejects.toMatchObject({ code: 409002 });
  });

  it("refuses another user or API key of the business (409002) and shows nothing of the first answer (extensions §E10)", async () => {
    const store = new IdempotencyStore(new MemoryKvStore(), SECRET);
    await (await first(store, req("k1", '{"a":1}'), user("b1", "owner"))).proceed(answer(201, '{"secret":"whsec_x"}'));
    for (const other of [user("b1", "member"), apiKey("b1", "key-of-owner"), { businessId: "b1", userId: "owner", apiKeyId: "k2" }]) {
      const refused = store.begin(req("k1", '{"a":1}'), other);
      await expect(refused).rejects.toMatchObject({ code: 409002, details: [{ path: "Idempotency-Key", message: expect.stringContaining("another user or API key") }] });
      await expect(refused).rejects.not.toMatchObject({ details: [{ message: expect.stringContaining("whsec_") }] });
    }
    const mine = await store.begin(req("k1", '{"a":1}'), user("b1", "owner"));
    expect(mine && "replay" in mine && mine.replay.body.toString()).toBe('{"secret":"whsec_x"}');
    // A key's entry is the key's own, not its creator's.
    await (await first(store, req("k2", "{}"), apiKey("b1", "k9"))).proceed(answer(201, "{}"));
    await expect(store.begin(req("k2", "{}"), user("b1", "u1"))).rejects.toMatchObject({ code: 409002 });
    const sameKey = await store.begin(req("k2", "{}"), apiKey("b1", "k9"));
    expect(sameKey && "replay" in sameKey).toBe(true);
  });

  it("refuses another caller at once while the first request still runs, instead of waiting for its answer", async () => {
    const store = new IdempotencyStore(new MemoryKvStore(), SECRET, { waitForInFlightMs: 5_000 });
    const running = await first(store, req("k1", "{}"), user("b1", "owner"));
    const started = Date.now();
    await expect(store.begin(req("k1", "{}"), user("b1", "member"))).rejects.toMatchObject({ code: 409002 });
    expect(Date.now() - started).toBeLessThan(1_000);
    await running.abandon();
  });

  it("forgets server errors so the client can retry with the same key", async () => {
    const store = new IdempotencyStore(new MemoryKvStore(), SECRET);
    await (await first(store, req("k1", "{}"))).proceed(answer(503, "{}"));
    const again = await store.begin(req("k1", "{}"), user("b1"));
    expect(again && "proceed" in again).toBe(true);
  });

  it("keeps the key of a write in doubt (issue 42): the retry is refused with 409002 saying it may have completed, never run again", async () => {
    const store = new IdempotencyStore(new MemoryKvStore(), SECRET, { waitForInFlightMs: 0 });
    await expect((await first(store, req("k1", "{}"))).proceed({ ...answer(503, "{}"), outcomeInDoubt: true })).resolves.toBeUndefined();
    await expect(store.begin(req("k1", "{}"), user("b1"))).rejects.toMatchObject({
      code: 409002,
      details: [{ path: "Idempotency-Key", message: expect.stringContaining("may have completed") }],
    });
    // Still per caller and per request: another caller, or another request with the key, learns nothing of it.
    await expect(store.begin(req("k1", "{}"), user("b1", "u2"))).rejects.toMatchObject({ details: [{ message: expect.stringContaining("another user or API key") }] });
    await expect(store.begin(req("k1", '{"a":1}'), user("b1"))).rejects.toMatchObject({ code: 409002, details: undefined });
    // A 503000 not in doubt (nothing was written) still frees its key.
    await (await first(store, req("k2", "{}"))).proceed(answer(503, "{}"));
    expect(await store.begin(req("k2", "{}"), user("b1"))).toHaveProperty("proceed");
  });

  it("a store that cannot keep the in-doubt mark: the in-flight marker stays, so the retry is still refused", async () => {
    const kv = failingWrites(new MemoryKvStore());
    kv.failing = false;
    const store = new IdempotencyStore(kv, SECRET, { waitForInFlightMs: 0 });
    const outcome = await first(store, req("k1", "{}"));
    kv.failing = true;
    await expect(outcome.proceed({ ...answer(503, "{}"), outcomeInDoubt: true })).resolves.toBeUndefined();
    kv.failing = false;
    await expect(store.begin(req("k1", "{}"), user("b1"))).rejects.toMatchObject({ code: 409002 });
  });

  it("rejects malformed keys with 400001", async () => {
    await expect(new IdempotencyStore(new MemoryKvStore(), SECRET).begin(req("x".repeat(256), "{}"), user("b1"))).rejects.toMatchObject({ code: 400001 });
  });

  describe("one-time secrets at rest", () => {
    const body = Buffer.from(JSON.stringify({ success: true, data: { id: "k", key: "svc_" + "A".repeat(40), secret: "whsec_" + "B".repeat(44) } }));

    it("keeps no secret, password or request hash in clear, and replays the answer byte for byte", async () => {
      const kv = new MemoryKvStore();
      const store = new IdempotencyStore(kv, SECRET);
      const requestBody = '{"name":"ci","password":"correct-horse-battery"}';
      await (await first(store, req("k1", requestBody, "/api/v1/api-key"))).proceed({ status: 201, headers: { "content-type": "application/json", "x-request-id": "r1" }, body });
      const keys = (kv as unknown as { entries: Map<string, unknown> }).entries;
      const raw = [...keys.values()].map((e) => String((e as { value: string }).value)).join("\n");
      expect(raw).toContain("sealed");
      expect(revealsSecret(raw)).toBe(false);
      const again = await store.begin(req("k1", requestBody, "/api/v1/api-key"), user("b1"));
      if (!again || !("replay" in again)) throw new Error("expected a replay");
      expect(again.replay.status).toBe(201);
      expect(again.replay.body.equals(body)).toBe(true);
      expect(again.replay.headers).toEqual({ "content-type": "application/json", "x-request-id": "r1", "idempotent-replayed": "true" });
    });

    it("an entry moved under another business, or one of another encryption key, cannot be read: 409002, never a second run", async () => {
      const kv = new MemoryKvStore();
      const store = new IdempotencyStore(kv, SECRET);
      await (await first(store, req("k1", "{}"))).proceed({ status: 201, headers: {}, body });
      const [fromKey, entry] = [...(kv as unknown as { entries: Map<string, { value: string }> }).entries][0]!;
      await kv.set(fromKey!.replace(":b1:", ":b2:"), entry!.value);
      const unreadable = { code: 409002, details: [{ path: "Idempotency-Key", message: expect.stringContaining("cannot be read") }] };
      await expect(store.begin(req("k1", "{}"), user("b2"))).rejects.toMatchObject(unreadable);
      const rotated = new IdempotencyStore(kv, "another-secret-0123456789abcdef-0123456789");
      await expect(rotated.begin(req("k1", "{}"), user("b1"))).rejects.toMatchObject(unreadable);
      // Still there for the gateway that can read it.
      const again = await store.begin(req("k1", "{}"), user("b1"));
      expect(again && "replay" in again && again.replay.body.equals(body)).toBe(true);
      await kv.set(fromKey!, "not an entry");
      await expect(store.begin(req("k1", "{}"), user("b1"))).rejects.toMatchObject(unreadable);
    });

    (testInfra.redisUrl ? it : it.skip)("in Redis: the raw stored value holds no svc_ or whsec_ secret, and replay returns it", async () => {
      const kv = new RedisKvStore(testInfra.redisUrl!, `test-idem-${randomUUID()}:`);
      try {
        const store = new IdempotencyStore(kv, SECRET);
        const businessId = randomUUID();
        await (await first(store, req("k1", "{}", "/api/v1/webhook"), user(businessId))).proceed({ status: 201, headers: { "content-type": "application/json" }, body });
        const names = await kv.redis.keys(`test-idem-*${businessId}*`);
        expect(names).toHaveLength(1);
        const raw = await kv.redis.get(names[0]!);
        expect(raw).toContain("sealed");
        expect(revealsSecret(raw!)).toBe(false);
        const again = await store.begin(req("k1", "{}", "/api/v1/webhook"), user(businessId));
        expect(again && "replay" in again && again.replay.body.equals(body)).toBe(true);
        await kv.redis.del(...names);
      } finally {
        await kv.close();
      }
    });
  });

  it(`does not keep an answer over ${MAX_KEPT_RESPONSE_BYTES} bytes, and refuses to run its request again (409002)`, async () => {
    const kv = new MemoryKvStore();
    const store = new IdempotencyStore(kv, SECRET);
    await (await first(store, req("k1", "{}"))).proceed(answer(201, JSON.stringify({ a: "x".repeat(MAX_KEPT_RESPONSE_BYTES) })));
    const raw = [...(kv as unknown as { entries: Map<string, { value: string }> }).entries.values()][0]!.value;
    expect(raw.length).toBeLessThan(1000);
    await expect(store.begin(req("k1", "{}"), user("b1"))).rejects.toMatchObject({ code: 409002, details: [{ path: "Idempotency-Key" }] });
  });

  describe("when the key-value store fails", () => {
    it("saving the answer: 503000, and a retry is refused (409002), not run twice", async () => {
      const kv = failingWrites(new MemoryKvStore());
      kv.failing = false;
      const store = new IdempotencyStore(kv, SECRET, { waitForInFlightMs: 200 });
      const outcome = await first(store, req("k1", "{}"));
      kv.failing = true;
      await expect(outcome.proceed(answer(201, '{"id":1}'))).rejects.toMatchObject({ code: 503000 });
      kv.failing = false;
      // The small "completed, not saved" mark was refused too; the in-flight marker remains.
      await expect(store.begin(req("k1", "{}"), user("b1"))).rejects.toMatchObject({ code: 409002 });
    });

    it("saving a large answer fails but the small mark succeeds: the retry is refused with a reason", async () => {
      const inner = new MemoryKvStore();
      const kv = Object.create(inner) as KvStore;
      kv.set = (key, value, ttl) => (value.length > 400 ? Promise.reject(new Error("value too large")) : inner.set(key, value, ttl));
      const store = new IdempotencyStore(kv, SECRET);
      const outcome = await first(store, req("k1", "{}"));
      await expect(outcome.proceed(answer(201, JSON.stringify({ id: "x".repeat(1000) })))).rejects.toMatchObject({ code: 503000 });
      await expect(store.begin(req("k1", "{}"), user("b1"))).rejects.toMatchObject({
        code: 409002,
        details: [{ path: "Idempotency-Key", message: "The first request with this key completed, but its answer could not be saved" }],
      });
    });

    it("a store that fails entirely: 503000 at the start, and a failed release never masks the answer", async () => {
      const kv = failingWrites(new MemoryKvStore(), { setIfAbsent: true, del: true });
      const store = new IdempotencyStore(kv, SECRET, { waitForInFlightMs: 0 });
      await expect(store.begin(req("k1", "{}"), user("b1"))).rejects.toMatchObject({ code: 503000 });
      kv.failing = false;
      const outcome = await first(store, req("k1", "{}"));
      kv.failing = true;
      await expect(outcome.proceed(answer(502, "{}"))).resolves.toBeUndefined();
      await expect(outcome.abandon()).resolves.toBeUndefined();
    });
  });
});
