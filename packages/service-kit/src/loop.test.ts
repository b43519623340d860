import { startLoop } from "./loop";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function waitFor(condition: () => boolean, timeoutMs: number, stepMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await sleep(stepMs);
  }
}

describe("startLoop", () => {
  it("asks for the pause after each turn, so a turn's outcome sets it", async () => {
    const turns: number[] = [];
    let delay = 1;
    const loop = startLoop({
      turn: async () => {
        turns.push(turns.length);
        // The third turn decides the next one is far away.
        if (turns.length === 3) delay = 60_000;
      },
      delayMs: () => delay,
      onError: (err) => {
        throw err;
      },
    });
    try {
      await waitFor(() => turns.length >= 3, 10_000, 2);
      await sleep(50);
      expect(turns).toHaveLength(3);
    } finally {
      await loop.stop();
    }
  });

  it("reports a failed turn and goes on", async () => {
    const errors: unknown[] = [];
    let turns = 0;
    const loop = startLoop({
      turn: async () => {
        turns++;
        if (turns === 1) throw new Error("first turn fails");
      },
      delayMs: () => 1,
      onError: (err) => errors.push(err),
    });
    try {
      await waitFor(() => turns >= 2, 10_000, 2);
      expect(errors).toEqual([new Error("first turn fails")]);
    } finally {
      await loop.stop();
    }
  });

  it("waits firstDelayMs before the first turn, and stop() waits for the turn in progress and starts no other", async () => {
    let turns = 0;
    let finished = false;
    const late = startLoop({ turn: async () => void turns++, delayMs: () => 1, firstDelayMs: 60_000, onError: () => {} });
    await sleep(30);
    expect(turns).toBe(0);
    await late.stop();

    let started = false;
    const loop = startLoop({
      turn: async () => {
        started = true;
        await sleep(50);
        finished = true;
      },
      delayMs: () => 1,
      onError: () => {},
    });
    await waitFor(() => started, 10_000, 2);
    await loop.stop();
    expect(finished).toBe(true);
    started = false;
    await sleep(30);
    expect(started).toBe(false);
  });
});
