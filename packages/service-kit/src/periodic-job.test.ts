import { Writable } from "node:stream";
import { createLogger } from "@crm/logger";
import { startPeriodicJob } from "./periodic-job";

function capturedLogger() {
  const lines: Array<Record<string, unknown>> = [];
  const destination = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(JSON.parse(chunk.toString("utf8")) as Record<string, unknown>);
      done();
    },
  });
  return { logger: createLogger({ service: "test", level: "debug", destination }), lines };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("startPeriodicJob", () => {
  it("runs batches until one is short, then waits for the next interval", async () => {
    const { logger } = capturedLogger();
    let backlog = 25;
    const sizes: number[] = [];
    const job = startPeriodicJob({
      name: "t",
      intervalMs: 60_000,
      batchSize: 10,
      logger,
      batch: async (n) => {
        const rows = Math.min(n, backlog);
        backlog -= rows;
        sizes.push(rows);
        return rows;
      },
    });
    await sleep(50);
    expect(sizes).toEqual([10, 10, 5]);
    backlog = 3;
    expect(await job.runNow()).toBe(3);
    await job.stop();
    expect(await job.runNow()).toBe(0);
  });

  it("bounds one run by maxBatchesPerRun", async () => {
    const { logger } = capturedLogger();
    let calls = 0;
    const job = startPeriodicJob({ name: "t", intervalMs: 60_000, firstRunAfterMs: 60_000, batchSize: 2, maxBatchesPerRun: 3, logger, batch: async (n) => (calls++, n) });
    expect(await job.runNow()).toBe(6);
    expect(calls).toBe(3);
    await job.stop();
  });

  it("logs a failed batch and keeps running on the interval", async () => {
    const { logger, lines } = capturedLogger();
    let calls = 0;
    const job = startPeriodicJob({
      name: "flaky",
      intervalMs: 20,
      batchSize: 10,
      logger,
      batch: async () => {
        calls++;
        if (calls === 1) throw new Error("database down");
        return 0;
      },
    });
    await sleep(200);
    await job.stop();
    expect(calls).toBeGreaterThan(2);
    expect(lines.some((l) => l["msg"] === "periodic job run failed" && l["job"] === "flaky")).toBe(true);
  });

  it("stop() waits for the batch in progress and starts no other", async () => {
    const { logger } = capturedLogger();
    let release!: () => void;
    let calls = 0;
    let finished = false;
    const job = startPeriodicJob({
      name: "t",
      intervalMs: 1,
      batchSize: 1,
      logger,
      batch: async () => {
        calls++;
        await new Promise<void>((r) => (release = r));
        finished = true;
        return 1;
      },
    });
    await sleep(20);
    const stopping = job.stop();
    let stoppedAt = false;
    void stopping.then(() => (stoppedAt = true));
    await sleep(20);
    expect(stoppedAt).toBe(false);
    release();
    await stopping;
    expect(finished).toBe(true);
    await sleep(20);
    expect(calls).toBe(1);
  });
});
