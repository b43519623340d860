import { BatchedLookup } from "./batched-lookup";

/** A loader that records each batch and answers when the test says so. */
function recordingLoader() {
  const batches: string[][] = [];
  const pending: Array<{ keys: string[]; answer: (values: Map<string, string> | Error) => void }> = [];
  const load = (keys: string[]) =>
    new Promise<ReadonlyMap<string, string>>((resolve, reject) => {
      batches.push(keys);
      pending.push({ keys, answer: (values) => (values instanceof Error ? reject(values) : resolve(values)) });
    });
  const answerAll = (value: (key: string) => string | undefined = (k) => `v:${k}`) => {
    for (const { keys, answer } of pending.splice(0)) answer(new Map(keys.flatMap((k) => (value(k) === undefined ? [] : [[k, value(k)!] as [string, string]]))));
  };
  return { batches, pending, load, answerAll };
}

const turn = () => new Promise((resolve) => setImmediate(resolve));

describe("BatchedLookup", () => {
  it("asks for the keys of one turn together, each key once, in batches of at most maxBatch", async () => {
    const loader = recordingLoader();
    const lookup = new BatchedLookup(loader.load, { maxBatch: 3, maxInFlight: 10, maxWaiting: 100 });
    const answers = ["a", "b", "a", "c", "d", "b"].map((k) => lookup.get(k, k));
    await turn();
    expect(loader.batches).toEqual([["a", "b", "c"], ["d"]]);
    // A key asked for while its request is out shares that request.
    const late = lookup.get("a", "a");
    loader.answerAll();
    expect(await Promise.all([...answers, late])).toEqual(["v:a", "v:b", "v:a", "v:c", "v:d", "v:b", "v:a"]);
    // Answered keys are asked again (the cache, not this, remembers answers).
    const again = lookup.get("a", "a");
    await turn();
    expect(loader.batches).toHaveLength(3);
    loader.answerAll();
    expect(await again).toBe("v:a");
  });

  it("keeps at most maxInFlight requests out and sends the rest as they come back", async () => {
    const loader = recordingLoader();
    const lookup = new BatchedLookup(loader.load, { maxBatch: 1, maxInFlight: 2, maxWaiting: 100 });
    const answers = ["a", "b", "c", "d"].map((k) => lookup.get(k, k));
    await turn();
    expect(loader.batches).toEqual([["a"], ["b"]]);
    loader.answerAll();
    await turn();
    await turn();
    expect(loader.batches).toEqual([["a"], ["b"], ["c"], ["d"]]);
    loader.answerAll();
    expect(await Promise.all(answers)).toEqual(["v:a", "v:b", "v:c", "v:d"]);
  });

  it("fails every waiter of a failed request, a key its answer left out with 503000, and sheds beyond maxWaiting", async () => {
    const loader = recordingLoader();
    const lookup = new BatchedLookup(loader.load, { maxBatch: 10, maxInFlight: 1, maxWaiting: 2 });
    const [a, b] = [lookup.get("a", "a"), lookup.get("b", "b")];
    await expect(lookup.get("c", "c")).rejects.toMatchObject({ code: 503000 });
    await turn();
    loader.pending[0]!.answer(new Error("identity down"));
    await expect(a).rejects.toThrow("identity down");
    await expect(b).rejects.toThrow("identity down");
    const partial = [lookup.get("x", "x"), lookup.get("y", "y")];
    await turn();
    loader.answerAll((k) => (k === "x" ? "v:x" : undefined));
    await expect(partial[0]).resolves.toBe("v:x");
    await expect(partial[1]).rejects.toMatchObject({ code: 503000 });
  });
});
