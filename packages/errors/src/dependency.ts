/** Seconds a client is told to wait (`Retry-After`) before retrying a 503000. */
export const UNAVAILABLE_RETRY_AFTER_S = 1;

/**
 * What is known of the write a dependency was given when it failed (issue 42):
 * - `not-written`: nothing of it was kept (it was never sent, or the transaction rolled back), so
 *   running the request again is safe;
 * - `in-doubt`: it may or may not have been kept (the connection was lost during COMMIT, or during a
 *   statement that commits on its own), and nothing could tell which: running it again could do it twice;
 * - `retry-safe`: it may have been kept, but the service recognises a retry of it and answers that
 *   with what was kept (a create that claims its Idempotency-Key in its own write).
 * Undefined: no write was involved, or the dependency says nothing of one (treated as `not-written`).
 */
export type WriteOutcome = "not-written" | "in-doubt" | "retry-safe";

/**
 * Internal response header with which a service tells the gateway that its 503000 answers a write
 * whose outcome is in doubt: the gateway then keeps the request's Idempotency-Key as completed without
 * an answer (a retry is 409002), rather than freeing it for a second run. Never passed to clients.
 */
export const OUTCOME_IN_DOUBT_HEADER = "x-crm-outcome-in-doubt";

/**
 * A dependency (a database, a store, another service) could not be reached, or dropped the
 * connection while it worked: not the caller's fault, and worth a retry. The error middleware
 * answers it 503000 with `Retry-After`, never 500000. Deliberately without a `code` property:
 * Prisma re-wraps an error that has one into its own request error (and this class is lost), and
 * passes one without it through unchanged.
 */
export class DependencyUnavailableError extends Error {
  /** What became of the write the dependency was given, when one was (WriteOutcome). */
  readonly outcome: WriteOutcome | undefined;

  constructor(
    /** What was unreachable, for the logs: `database`, `redis`... */
    readonly dependency: string,
    message: string,
    options?: { cause?: unknown; outcome?: WriteOutcome },
  ) {
    super(message, options);
    this.name = "DependencyUnavailableError";
    this.outcome = options?.outcome;
  }
}

export function isDependencyUnavailable(value: unknown): value is DependencyUnavailableError {
  return value instanceof DependencyUnavailableError;
}

/**
 * Whether `err`, or the error it was caused by, is a DependencyUnavailableError whose write is in
 * doubt: code that wraps a dependency's failure in its own error keeps the doubt, and code that
 * settles it wraps it in a DependencyUnavailableError of its own (the nearest one says).
 */
export function isOutcomeInDoubt(err: unknown): boolean {
  for (let cause = err, depth = 0; typeof cause === "object" && cause !== null && depth < 8; cause = (cause as { cause?: unknown }).cause, depth++) {
    if (cause instanceof DependencyUnavailableError) return cause.outcome === "in-doubt";
  }
  return false;
}
