import Redis from "ioredis";
import { testInfra, uniqueName } from "@crm/testing";
import { LeasedCountStore } from "./leased-count-store";

const describeRedis: jest.Describe = testInfra.redisUrl ? describe : describe.skip;

describeRedis("LeasedCountStore (Redis)", () => {
  let redis: Redis;
  let other: Redis;
  const prefix = () => `${uniqueName("rl")}:`;

  beforeAll(() => {
    redis = new Redis(testInfra.redisUrl!);
    other = new Redis(testInfra.redisUrl!);
  });
  afterAll(async () => {
    await redis.quit();
    await other.quit();
  });

  /** Each block the store asks `client` for (its size), from the commands sent; the script is loaded first. */
  async function counted(store: LeasedCountStore, client: Redis): Promise<{ calls: number[] }> {
    await store.increment(`warm-${Math.random()}`);
    const seen = { calls: [] as number[] };
    const original = client.sendCommand.bind(client);
    jest.spyOn(client, "sendCommand").mockImplementation(((command: { name: string; args: unknown[] }, ...rest: unknown[]) => {
      if ((command.name === "evalsha" || command.name === "eval") && command.args.length === 5) seen.calls.push(Number(command.args[3]));
      return (original as (...a: unknown[]) => unknown)(command, ...rest);
    }) as unknown as Redis["sendCommand"]);
    return seen;
  }

  afterEach(() => jest.restoreAllMocks());

  it("with a small budget asks Redis for every request and hands out each count once, in order", async () => {
    const p = prefix();
    const store = new LeasedCountStore(redis, 50, 60_000, p);
    const seen = await counted(store, redis);
    const hits: number[] = [];
    for (let i = 0; i < 5; i++) hits.push((await store.increment("user:a")).totalHits);
    expect(hits).toEqual([1, 2, 3, 4, 5]);
    expect(seen.calls).toEqual([1, 1, 1, 1, 1]);
    expect(await redis.get(`${p}user:a`)).toBe("5");
  });

  it("two stores on one Redis spend one budget exactly when they alternate", async () => {
    const p = prefix();
    const one = new LeasedCountStore(redis, 4, 60_000, p);
    const two = new LeasedCountStore(other, 4, 60_000, p);
    const hits: number[] = [];
    for (const store of [one, two, one, two, one]) hits.push((await store.increment("user:b")).totalHits);
    expect(hits).toEqual([1, 2, 3, 4, 5]);
  });

  it("a burst of one turn is counted in one command, each request with its own count", async () => {
    const p = prefix();
    const store = new LeasedCountStore(redis, 1_000_000, 60_000, p);
    const seen = await counted(store, redis);
    const counts = await Promise.all(Array.from({ length: 40 }, () => store.increment("user:c")));
    expect(counts.map((c) => c.totalHits)).toEqual(Array.from({ length: 40 }, (_, i) => i + 1));
    expect(seen.calls).toEqual([40]);
  });

  it("a busy bucket takes counts ahead, and the Redis total never lags the counts handed out", async () => {
    const p = prefix();
    const store = new LeasedCountStore(redis, 1_000_000, 60_000, p);
    const seen = await counted(store, redis);
    let last = 0;
    for (let i = 0; i < 300; i++) {
      const { totalHits } = await store.increment("user:d");
      expect(totalHits).toBe(last + 1);
      last = totalHits;
      expect(Number(await redis.get(`${p}user:d`))).toBeGreaterThanOrEqual(totalHits);
    }
    expect(seen.calls.length).toBeLessThan(300);
    expect(Math.max(...seen.calls)).toBeGreaterThan(1);
    // What it holds unused is not reported as spent.
    const peeked = await store.get("user:d");
    expect(peeked?.totalHits).toBe(300);
  });

  it("never takes more ahead than 1% of the budget left", async () => {
    const p = prefix();
    const store = new LeasedCountStore(redis, 200, 60_000, p);
    const seen = await counted(store, redis);
    for (let i = 0; i < 150; i++) await store.increment("user:e");
    // 1% of at most 200 left rounds down to at most 2 ahead: blocks of at most 3.
    expect(Math.max(...seen.calls)).toBeLessThanOrEqual(3);
  });

  it("once the window is spent, refuses on its own until it ends, then counts anew", async () => {
    const p = prefix();
    const store = new LeasedCountStore(redis, 2, 1000, p);
    expect((await store.increment("ip:x")).totalHits).toBe(1);
    expect((await store.increment("ip:x")).totalHits).toBe(2);
    const seen = await counted(store, redis);
    const over = await store.increment("ip:x");
    expect(over.totalHits).toBe(3);
    for (let i = 0; i < 10; i++) expect((await store.increment("ip:x")).totalHits).toBeGreaterThan(2);
    expect(seen.calls).toEqual([]);
    // A refusal withdrawn is taken back where it was counted (here: in this store, not in Redis).
    await store.decrement("ip:x");
    expect(await redis.get(`${p}ip:x`)).toBe("2");
    await new Promise((resolve) => setTimeout(resolve, over.resetTime.getTime() - Date.now() + 20));
    expect((await store.increment("ip:x")).totalHits).toBe(1);
  });

  it("shares the window with rate-limit-redis's script (same key, same count, same expiry)", async () => {
    const p = prefix();
    await redis.set(`${p}user:f`, "7", "PX", 60_000);
    const store = new LeasedCountStore(redis, 50, 60_000, p);
    const count = await store.increment("user:f");
    expect(count.totalHits).toBe(8);
    expect(count.resetTime.getTime() - Date.now()).toBeGreaterThan(58_000);
    expect(await redis.pttl(`${p}user:f`)).toBeGreaterThan(58_000);
  });

  it("fails every waiting request when Redis is unreachable", async () => {
    const dead = new Redis("redis://127.0.0.1:1", { maxRetriesPerRequest: 0, lazyConnect: true, retryStrategy: () => null });
    dead.on("error", () => undefined);
    const store = new LeasedCountStore(dead, 50, 60_000, prefix());
    await expect(Promise.all([store.increment("k"), store.increment("k")])).rejects.toThrow();
    dead.disconnect();
  });
});
