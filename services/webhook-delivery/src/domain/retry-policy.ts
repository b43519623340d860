/** Delivery statuses an attempt can leave a record in (PENDING: waiting for a first attempt, or one a recovery queued). */
export type AttemptStatus = "SUCCESS" | "RETRYING" | "FAILED";

/** Production schedule (WEBHOOK_RETRY_DELAYS_MS): wait 60 s before the 1st retry, 300 s before the 2nd. */
export const DEFAULT_RETRY_DELAYS_MS: readonly number[] = [60_000, 300_000];

export interface AttemptResult {
  /** The attempt just made, 1-based: the record's `attempt` after this attempt. */
  attempt: number;
  /** A 2xx answer within the time-out. */
  succeeded: boolean;
  now: Date;
  /** Delay before each automatic retry; there are delays.length retries, so delays.length + 1 attempts. */
  delaysMs?: readonly number[];
  /** Sent by `POST .../deliveries/{id}/retry` rather than by the schedule. */
  manual?: boolean;
}

export interface AttemptDecision {
  status: AttemptStatus;
  nextRetryAt: Date | null;
}

/** Automatic attempts in all: the first one plus one per configured delay. */
export function maxAutomaticAttempts(delaysMs: readonly number[] = DEFAULT_RETRY_DELAYS_MS): number {
  return delaysMs.length + 1;
}

/**
 * What a delivery record becomes after an attempt (interface §3 and §6, decisions §6 and §8).
 * Failure of attempt n ≤ delays.length schedules attempt n + 1 after delays[n - 1]; the failure of
 * the last automatic attempt is final. A manual retry is a one-shot resend of a FAILED record: if it
 * fails the record stays FAILED and nothing is scheduled, whatever its attempt number.
 */
export function decideAfterAttempt(result: AttemptResult): AttemptDecision {
  const delays = result.delaysMs ?? DEFAULT_RETRY_DELAYS_MS;
  if (!Number.isInteger(result.attempt) || result.attempt < 1) {
    // A caller bug, not a delivery outcome: better loud than a silently wrong schedule.
    throw new RangeError(`attempt must be an integer >= 1, got ${result.attempt}`);
  }
  if (result.succeeded) return { status: "SUCCESS", nextRetryAt: null };
  if (result.manual) return { status: "FAILED", nextRetryAt: null };

  const delay = delays[result.attempt - 1];
  if (delay === undefined) return { status: "FAILED", nextRetryAt: null };
  if (!Number.isFinite(delay) || delay < 0) throw new RangeError(`retry delay must be a finite number >= 0, got ${delay}`);
  return { status: "RETRYING", nextRetryAt: new Date(result.now.getTime() + delay) };
}
