import { randomUUID } from "node:crypto";
import net, { type AddressInfo } from "node:net";
import { MemoryKvStore } from "./memory-kv-store";
import { REDIS_COMMAND_TIMEOUT_MS, RedisKvStore } from "./redis-kv-store";
import { FaultProxy, testInfra, waitFor } from "@crm/testing";
import type { KvStore } from "./kv-store";

// The same contract for both adapters; Redis runs when the test infrastructure has one.
const { redisUrl } = testInfra;
const adapters: Array<[string, () => KvStore]> = [["memory", () => new MemoryKvStore()]];
if (redisUrl) adapters.push(["redis", () => new RedisKvStore(redisUrl, `test:${randomUUID()}:`)]);

describe.each(adapters)("%s KvStore", (_name, make) => {
  let kv: KvStore;
  beforeEach(() => {
    kv = make();
  });
  afterEach(() => kv.close());

  it("gets, sets, deletes and expires", async () => {
    await kv.set("a", "1");
    await kv.set("b", "2", 50);
    expect(await kv.getMany(["a", "b", "c"])).toEqual(["1", "2", null]);
    await new Promise((r) => setTimeout(r, 80));
    expect(await kv.get("b")).toBeNull();
    await kv.del("a");
    expect(await kv.get("a")).toBeNull();
  });

  it("sets if absent only once", async () => {
    expect(await kv.setIfAbsent("lock", "x", 1000)).toBe(true);
    expect(await kv.setIfAbsent("lock", "y", 1000)).toBe(false);
    expect(await kv.get("lock")).toBe("x");
  });

  it("increments within a window", async () => {
    const first = await kv.increment("n", 1000);
    const second = await kv.increment("n", 1000);
    expect([first.value, second.value]).toEqual([1, 2]);
    expect(second.ttlMs).toBeGreaterThan(0);
    expect(second.ttlMs).toBeLessThanOrEqual(1000);
  });

  it("keeps sets", async () => {
    await kv.addToSet("s", "x", 1000);
    await kv.addToSet("s", "y");
    await kv.removeFromSet("s", "x");
    expect(await kv.members("s")).toEqual(["y"]);
  });
});

describe("RedisKvStore.close", () => {
  it("returns within its bound when Redis accepts and never answers", async () => {
    const silent = net.createServer((socket) => socket.on("data", () => undefined));
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
    const kv = new RedisKvStore(`redis://127.0.0.1:${(silent.address() as AddressInfo).port}`, "silent:");
    try {
      await new Promise((resolve) => kv.redis.once("connect", resolve));
      const started = Date.now();
      await kv.close();
      expect(Date.now() - started).toBeLessThan(5_000);
    } finally {
      kv.redis.disconnect();
      await new Promise((resolve) => silent.close(resolve));
    }
  }, 15_000);

  if (redisUrl) {
    it("quits a healthy Redis and is safe to call twice", async () => {
      const kv = new RedisKvStore(redisUrl, `test:${randomUUID()}:`);
      await kv.set("k", "v");
      await kv.close();
      await kv.close();
      expect(kv.redis.status).toBe("end");
    });
  }
});

(redisUrl ? describe : describe.skip)("RedisKvStore while Redis is away", () => {
  it("fails commands within its time-out, then at once, and works again soon after Redis returns", async () => {
    const target = new URL(redisUrl!);
    const proxy = await FaultProxy.start({ target: { host: target.hostname, port: Number(target.port || 6379) } });
    const kv = new RedisKvStore(`redis://${proxy.address}`, `test:${randomUUID()}:`);
    try {
      await kv.set("k", "v");
      proxy.cut();
      const first = Date.now();
      await expect(kv.get("k")).rejects.toThrow();
      expect(Date.now() - first).toBeLessThanOrEqual(REDIS_COMMAND_TIMEOUT_MS + 500);
      // Known to be away: no wait at all.
      await waitFor(async () => {
        const started = Date.now();
        await kv.get("k").catch(() => undefined);
        return Date.now() - started < 50;
      }, 5_000);
      proxy.restore();
      const back = Date.now();
      await waitFor(
        () =>
          kv.get("k").then(
            (v) => v === "v",
            () => false,
          ),
        5_000,
        10,
      );
      expect(Date.now() - back).toBeLessThan(1_000);
    } finally {
      await kv.close();
      await proxy.close();
    }
  }, 20_000);
});
