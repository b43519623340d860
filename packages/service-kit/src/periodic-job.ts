import type { Logger } from "@crm/logger";
import { startLoop } from "./loop";

/**
 * Housekeeping a service does for itself on an interval (retention, re-encryption): each run calls
 * `batch` until a batch handles fewer rows than `batchSize`, the run reaches `maxBatchesPerRun`, or
 * the job is stopped. Bounded batches keep every statement short (no long lock, no huge transaction);
 * making each batch safe with several instances (SKIP LOCKED, compare-and-set) is the batch's job.
 */
export interface PeriodicJobOptions {
  /** Appears in every log line of the job. */
  name: string;
  /** Pause between the end of one run and the start of the next. */
  intervalMs: number;
  /** Rows one batch may handle at most. */
  batchSize: number;
  /** Batches one run may make at most, so one run has a bounded duration; the rest waits a run. */
  maxBatchesPerRun?: number;
  /** Delay before the first run (0: at once, e.g. work left by a previous process). */
  firstRunAfterMs?: number;
  /** One bounded batch; resolves to the number of rows it handled. */
  batch: (batchSize: number) => Promise<number>;
  logger: Logger;
}

export interface PeriodicJob {
  /** One run now (after the current one, if any); resolves to the rows handled. For tests and tools. */
  runNow(): Promise<number>;
  /** No new batch starts; resolves once the batch in progress has finished. */
  stop(): Promise<void>;
}

const DEFAULT_MAX_BATCHES_PER_RUN = 100;

export function startPeriodicJob(options: PeriodicJobOptions): PeriodicJob {
  const { name, logger } = options;
  const maxBatches = options.maxBatchesPerRun ?? DEFAULT_MAX_BATCHES_PER_RUN;
  let stopped = false;
  let current: Promise<number> = Promise.resolve(0);

  async function run(): Promise<number> {
    const startedAt = Date.now();
    let handled = 0;
    let batches = 0;
    try {
      while (!stopped && batches < maxBatches) {
        const rows = await options.batch(options.batchSize);
        batches++;
        handled += rows;
        if (rows < options.batchSize) break;
      }
      if (handled > 0) logger.info({ job: name, rows: handled, batches, durationMs: Date.now() - startedAt }, "periodic job run");
    } catch (err) {
      // The next run tries again; a failed batch must never take the service down.
      logger.error({ err, job: name, rows: handled, batches }, "periodic job run failed");
    }
    return handled;
  }

  /** Timer runs and runNow() calls queue behind each other: never two runs at once. */
  function enqueue(): Promise<number> {
    current = current.then(run);
    return current;
  }

  const loop = startLoop({
    turn: async () => void (await enqueue()),
    delayMs: () => options.intervalMs,
    firstDelayMs: options.firstRunAfterMs ?? 0,
    // run() reports its own failures.
    onError: () => {},
  });

  return {
    runNow: () => (stopped ? Promise.resolve(0) : enqueue()),
    stop: async () => {
      stopped = true;
      await loop.stop();
      await current;
    },
  };
}
