import type { ResolvedAddress } from "./dispatcher";
import { cachingResolver } from "./host-resolver";

const answer: ResolvedAddress[] = [{ address: "93.184.216.34", family: 4 }];

describe("cachingResolver", () => {
  it("shares one lookup per name, reuses it for the TTL, then asks again", async () => {
    let clock = 0;
    const calls: string[] = [];
    const resolve = cachingResolver(
      async (hostname) => {
        calls.push(hostname);
        return answer;
      },
      { ttlMs: 1_000, timeoutMs: 500, maxEntries: 10, now: () => clock },
    );
    const results = await Promise.all(Array.from({ length: 20 }, () => resolve("hooks.example.com", 0)));
    expect(results.every((r) => r === answer)).toBe(true);
    expect(calls).toEqual(["hooks.example.com"]);
    clock = 999;
    await resolve("HOOKS.example.com", 0);
    expect(calls).toHaveLength(1);
    clock = 1_000;
    await resolve("hooks.example.com", 0);
    expect(calls).toHaveLength(2);
    await resolve("hooks.example.com", 4);
    expect(calls).toHaveLength(3); // another family is another question
  });

  it("fails a lookup that hangs with EAI_AGAIN after the time-out, and does not cache failures", async () => {
    let hang = true;
    const resolve = cachingResolver((_hostname) => (hang ? new Promise<ResolvedAddress[]>(() => undefined) : Promise.resolve(answer)), {
      ttlMs: 60_000,
      timeoutMs: 30,
      maxEntries: 10,
    });
    await expect(resolve("slow.example.com", 0)).rejects.toMatchObject({ code: "EAI_AGAIN" });
    hang = false;
    await expect(resolve("slow.example.com", 0)).resolves.toBe(answer);
  });

  it("remembers at most maxEntries names", async () => {
    const calls: string[] = [];
    const resolve = cachingResolver(
      async (hostname) => {
        calls.push(hostname);
        return answer;
      },
      { ttlMs: 60_000, timeoutMs: 500, maxEntries: 2 },
    );
    for (const name of ["a.test", "b.test", "c.test", "a.test"]) await resolve(name, 0);
    expect(calls).toEqual(["a.test", "b.test", "c.test", "a.test"]);
  });
});
