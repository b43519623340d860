// A revocation wins every interleaving with a fill (identity answering a gateway's miss from a
// database read made before the revocation committed). Every order of the two's store operations is
// run, one schedule after another, on a store whose operations each wait for the test's go.
import { type KvStore, MemoryKvStore } from "@crm/kv-store";
import { AuthCache } from "./auth-cache";

const TTL_MS = 60_000;

interface Gate {
  actor: string;
  go: () => void;
}

/** A view of one shared store whose every operation waits in `gates` until the schedule lets it go. */
function gated(inner: MemoryKvStore, actor: string, gates: Gate[]): KvStore {
  const wait = () => new Promise<void>((go) => gates.push({ actor, go }));
  return {
    get: async (key) => (await wait(), inner.get(key)),
    getMany: async (keys) => (await wait(), inner.getMany(keys)),
    set: async (key, value, ttlMs) => (await wait(), inner.set(key, value, ttlMs)),
    setIfAbsent: async (key, value, ttlMs) => (await wait(), inner.setIfAbsent(key, value, ttlMs)),
    del: async (...keys) => (await wait(), inner.del(...keys)),
    increment: async (key, ttlMs) => (await wait(), inner.increment(key, ttlMs)),
    addToSet: async (key, member, ttlMs) => (await wait(), inner.addToSet(key, member, ttlMs)),
    removeFromSet: async (key, member) => (await wait(), inner.removeFromSet(key, member)),
    members: async (key) => (await wait(), inner.members(key)),
    ping: async () => undefined,
    close: async () => undefined,
  };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

interface Outcome {
  /** The token's entry as the revocation returned (when its logout would answer 204). */
  atRevocationEnd: string | null;
  /** And once both are over. */
  atEnd: string | null;
  filled: boolean;
  /** How many operations could go at each step, for the next schedule. */
  choices: number[];
}

/** Runs a fill and a revocation of one session, letting the operations go in the order `schedule` picks. */
async function runSchedule(schedule: readonly number[], cachedBefore: boolean): Promise<Outcome> {
  const store = new MemoryKvStore();
  const gates: Gate[] = [];
  if (cachedBefore) await new AuthCache(store).allowAccessToken("jti", "sid", TTL_MS);
  const reader = new AuthCache(store);
  let atRevocationEnd: string | null | undefined;
  let done = 0;
  const fill = new AuthCache(gated(store, "fill", gates)).fillAccessToken("jti", "sid", TTL_MS);
  const revoke = new AuthCache(gated(store, "revoke", gates)).revokeSession("sid", TTL_MS).then(async () => {
    atRevocationEnd = await reader.allowedAccessToken("jti");
  });
  void fill.finally(() => (done += 1));
  void revoke.finally(() => (done += 1));
  const choices: number[] = [];
  for (let step = 0; done < 2; step++) {
    await settle();
    if (gates.length === 0) continue;
    // Operations in a stable order: by actor, then in the order each actor issued them.
    gates.sort((a, b) => a.actor.localeCompare(b.actor));
    choices.push(gates.length);
    const [next] = gates.splice(schedule[step] ?? 0, 1);
    next!.go();
  }
  const filled = await fill;
  await revoke;
  const atEnd = await reader.allowedAccessToken("jti");
  await store.close();
  return { atRevocationEnd: atRevocationEnd ?? null, atEnd, filled, choices };
}

/** The schedule after `schedule` in depth-first order over the choices seen, or undefined when all are done. */
function nextSchedule(schedule: readonly number[], choices: readonly number[]): number[] | undefined {
  const full = choices.map((_, i) => schedule[i] ?? 0);
  for (let i = full.length - 1; i >= 0; i--) {
    if (full[i]! + 1 < choices[i]!) return [...full.slice(0, i), full[i]! + 1];
  }
  return undefined;
}

describe.each([
  ["the store lost the token (restarted empty)", false],
  ["the store still lists the token", true],
])("a fill racing a revocation when %s", (_name, cachedBefore) => {
  it("never leaves the token allowed once the revocation returns, in any order", async () => {
    let schedule: number[] | undefined = [];
    let runs = 0;
    while (schedule) {
      const outcome = await runSchedule(schedule, cachedBefore);
      expect({ schedule, atRevocationEnd: outcome.atRevocationEnd, atEnd: outcome.atEnd }).toEqual({ schedule, atRevocationEnd: null, atEnd: null });
      schedule = nextSchedule(schedule, outcome.choices);
      runs += 1;
    }
    // Every interleaving of the two's operations was run (a fill that finds the tombstone stops early).
    expect(runs).toBeGreaterThan(10);
  });
});
