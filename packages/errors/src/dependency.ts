/** Seconds a client is told to wait (`Retry-After`) before retrying a 503000. */
export const UNAVAILABLE_RETRY_AFTER_S = 1;

/**
 * A dependency (a database, a store, another service) could not be reached, or dropped the
 * connection while it worked: not the caller's fault, and worth a retry. The error middleware
 * answers it 503000 with `Retry-After`, never 500000. Deliberately without a `code` property:
 * Prisma re-wraps an error that has one into its own request error (and this class is lost), and
 * passes one without it through unchanged.
 */
export class DependencyUnavailableError extends Error {
  constructor(
    /** What was unreachable, for the logs: `database`, `redis`... */
    readonly dependency: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = "DependencyUnavailableError";
  }
}

export function isDependencyUnavailable(value: unknown): value is DependencyUnavailableError {
  return value instanceof DependencyUnavailableError;
}
