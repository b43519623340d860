import { env } from "@crm/config";
import type { Logger } from "@crm/logger";
import { startPeriodicJob, type PeriodicJob } from "./periodic-job";

/** One kind of row a service deletes once it is past its retention window. */
export interface RetentionRule {
  /** What is deleted, for logs and results: "outbox events", "deliveries", ... */
  name: string;
  /**
   * Deletes at most `limit` rows past retention at `now`; resolves to how many it deleted. Must be safe
   * with several instances running it at once (e.g. a CTE selecting ids `FOR UPDATE SKIP LOCKED`).
   */
  deleteBatch(limit: number, now: Date): Promise<number>;
}

export interface RetentionOptions {
  rules: readonly RetentionRule[];
  /** RETENTION_INTERVAL_MS. */
  intervalMs: number;
  /** RETENTION_BATCH_SIZE: rows one statement deletes at most. */
  batchSize: number;
  logger: Logger;
  now?: () => Date;
}

export interface Retention {
  /** One run of every rule now; rows deleted per rule. For tests and tools. */
  runNow(): Promise<Record<string, number>>;
  /** No new batch starts; resolves once the batches in progress have finished. */
  stop(): Promise<void>;
}

/** The two settings every service with retention reads; each service adds its own windows. */
export const retentionConfigFields = {
  /** How often each retention rule runs. */
  RETENTION_INTERVAL_MS: env.int(600_000, 1),
  /** Rows one delete statement removes at most (short statements, short locks). */
  RETENTION_BATCH_SIZE: env.int(1_000, 1),
};

// A first run soon after start (a process that restarts often must still clean up), but not during
// start-up itself, where it would compete with migrations and the first requests.
const FIRST_RUN_AFTER_MS = 30_000;

/** Runs every rule on its own periodic job, in bounded batches, until stopped (on SIGTERM via stop()). */
export function startRetention(options: RetentionOptions): Retention {
  const now = options.now ?? (() => new Date());
  const jobs: Array<[string, PeriodicJob]> = options.rules.map((rule) => [
    rule.name,
    startPeriodicJob({
      name: `retention: ${rule.name}`,
      intervalMs: options.intervalMs,
      firstRunAfterMs: Math.min(options.intervalMs, FIRST_RUN_AFTER_MS),
      batchSize: options.batchSize,
      // The cut-off moves with each batch: harmless, and a long run never works on a stale "now".
      batch: (limit) => rule.deleteBatch(limit, now()),
      logger: options.logger,
    }),
  ]);
  return {
    runNow: async () => Object.fromEntries(await Promise.all(jobs.map(async ([name, job]) => [name, await job.runNow()] as const))),
    stop: async () => {
      await Promise.all(jobs.map(([, job]) => job.stop()));
    },
  };
}
