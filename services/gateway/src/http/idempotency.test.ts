import type { Request } from "express";
import { MemoryKvStore } from "@crm/kv-store";
import { IdempotencyStore } from "./idempotency";

function req(key: string | undefined, body: string, url = "/api/v1/client"): Request {
  return {
    method: "POST",
    originalUrl: url,
    rawBody: Buffer.from(body),
    get: (name: string) => (name.toLowerCase() === "idempotency-key" ? key : undefined),
  } as unknown as Request;
}

const answer = (status: number, body: string) => ({ status, headers: { "content-type": "application/json" }, body: Buffer.from(body) });

describe("IdempotencyStore", () => {
  it("does nothing without the header", async () => {
    expect(await new IdempotencyStore(new MemoryKvStore()).begin(req(undefined, "{}"), "b1")).toBeUndefined();
  });

  it("replays the first answer for the same request, per business", async () => {
    const store = new IdempotencyStore(new MemoryKvStore());
    const first = await store.begin(req("k1", '{"a":1}'), "b1");
    if (!first || !("proceed" in first)) throw new Error("expected to proceed");
    await first.proceed(answer(201, '{"id":1}'));
    const again = await store.begin(req("k1", '{"a":1}'), "b1");
    expect(again && "replay" in again && again.replay.body.toString()).toBe('{"id":1}');
    expect(again && "replay" in again && again.replay.headers["idempotent-replayed"]).toBe("true");
    const otherBusiness = await store.begin(req("k1", '{"a":1}'), "b2");
    expect(otherBusiness && "proceed" in otherBusiness).toBe(true);
  });

  it("refuses the same key with a different request (409002)", async () => {
    const store = new IdempotencyStore(new MemoryKvStore());
    const first = await store.begin(req("k1", '{"a":1}'), "b1");
    if (!first || !("proceed" in first)) throw new Error("expected to proceed");
    await first.proceed(answer(201, "{}"));
    await expect(store.begin(req("k1", '{"a":2}'), "b1")).rejects.toMatchObject({ code: 409002 });
    await expect(store.begin(req("k1", '{"a":1}', "/api/v1/invoice"), "b1")).rejects.toMatchObject({ code: 409002 });
  });

  it("forgets server errors so the client can retry with the same key", async () => {
    const store = new IdempotencyStore(new MemoryKvStore());
    const first = await store.begin(req("k1", "{}"), "b1");
    if (!first || !("proceed" in first)) throw new Error("expected to proceed");
    await first.proceed(answer(503, "{}"));
    const again = await store.begin(req("k1", "{}"), "b1");
    expect(again && "proceed" in again).toBe(true);
  });

  it("rejects malformed keys with 400001", async () => {
    await expect(new IdempotencyStore(new MemoryKvStore()).begin(req("x".repeat(256), "{}"), "b1")).rejects.toMatchObject({ code: 400001 });
  });
});
