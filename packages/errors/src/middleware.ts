import type { ErrorRequestHandler, RequestHandler } from "express";
import { type AppError, errorBody, isAppError } from "./app-error";
import { ErrorCodes } from "./catalogue";
import { isDependencyUnavailable, isOutcomeInDoubt, OUTCOME_IN_DOUBT_HEADER, UNAVAILABLE_RETRY_AFTER_S } from "./dependency";
import { errors } from "./errors";

export interface ErrorLogger {
  error(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
}

/** Errors raised by body-parser carry a `type`; map the ones a client can cause to the catalogue. */
function fromBodyParser(err: { type?: unknown; status?: unknown }): AppError | undefined {
  switch (err.type) {
    case "entity.parse.failed":
      return errors.malformedJson();
    case "entity.too.large":
      return errors.bodyTooLarge();
    case "encoding.unsupported":
    case "charset.unsupported":
      return errors.unsupportedMediaType();
    case "request.aborted":
    case "request.size.invalid":
    case "stream.encoding.set":
      return unreadableBody();
    default:
      return undefined;
  }
}

const unreadableBody = () => errors.validationFailed([{ path: "body", message: "Request body could not be read" }]);

/**
 * What a body reader's failure means to the client. Besides the errors body-parser types, its
 * decompression fails with zlib's own error (a corrupt gzip, deflate or br body: `Z_DATA_ERROR`
 * wrapped as a bare 400), which the error middleware alone could not tell from a fault of ours
 * and answered 500000. Called only on a body reader's error, so anything untyped is the body's.
 */
export function bodyReadError(err: unknown): AppError {
  if (isAppError(err)) return err;
  return (typeof err === "object" && err !== null ? fromBodyParser(err) : undefined) ?? unreadableBody();
}

/**
 * The one error middleware: AppError -> its envelope; a dependency that failed -> 503000, logged at
 * error level with its cause; anything else -> 500000 with nothing internal in the body, the cause
 * logged at error level. Client errors are logged at info; a 5xx the code raised itself (a 503000 for
 * an upstream that did not answer, say) at warn, with the cause it carries, so an operator can tell
 * why. Every 503000 carries `Retry-After`, and one for a write whose outcome is in doubt carries
 * OUTCOME_IN_DOUBT_HEADER for the gateway (which keeps the Idempotency-Key rather than free it).
 */
export function errorMiddleware(getLogger: (req: Parameters<RequestHandler>[0]) => ErrorLogger): ErrorRequestHandler {
  return (err, req, res, next) => {
    if (res.headersSent) return next(err);
    const log = getLogger(req);
    if (isOutcomeInDoubt(err)) res.setHeader(OUTCOME_IN_DOUBT_HEADER, "1");
    if (isDependencyUnavailable(err)) {
      log.error({ err, dependency: err.dependency, ...(err.outcome ? { outcome: err.outcome } : {}) }, "dependency unavailable");
      return void sendError(res, errors.unavailable(undefined, { cause: err }));
    }
    const known = isAppError(err) ? err : typeof err === "object" && err !== null ? fromBodyParser(err) : undefined;
    if (known) {
      if (known.status >= 500) log.warn({ code: known.code, status: known.status, err: known.cause }, known.message);
      else log.info({ code: known.code, status: known.status }, known.message);
      sendError(res, known);
      return;
    }
    log.error({ err }, "unhandled error");
    res.status(500).json(errorBody(ErrorCodes.internal));
  };
}

/** The envelope, with `Retry-After` when the error says when to try again; a 503000 always does (1 s unless it says). */
function sendError(res: Parameters<ErrorRequestHandler>[2], error: AppError): void {
  const retryAfterS = error.retryAfterS ?? (error.code === ErrorCodes.unavailable ? UNAVAILABLE_RETRY_AFTER_S : undefined);
  if (retryAfterS !== undefined) res.setHeader("Retry-After", String(retryAfterS));
  res.status(error.status).json(error.toBody());
}

/** Final handler for unmatched routes. */
export const routeNotFound: RequestHandler = (_req, _res, next) => next(errors.routeNotFound());
