import type { ErrorRequestHandler, RequestHandler } from "express";
import { AppError, errorBody, isAppError } from "./app-error";

export interface ErrorLogger {
  error(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
}

/** Errors raised by body-parser carry a `type`; map the ones a client can cause to the catalogue. */
function fromBodyParser(err: { type?: unknown; status?: unknown }): AppError | undefined {
  switch (err.type) {
    case "entity.parse.failed":
      return new AppError(400002);
    case "entity.too.large":
      return new AppError(413000);
    case "encoding.unsupported":
    case "charset.unsupported":
      return new AppError(415000);
    case "request.aborted":
    case "request.size.invalid":
    case "stream.encoding.set":
      return new AppError(400001, [{ path: "body", message: "Request body could not be read" }]);
    default:
      return undefined;
  }
}

/**
 * The one error middleware: AppError -> its envelope; anything else -> 500000 with nothing
 * internal in the body, the cause logged at error level. Client errors are logged at info.
 */
export function errorMiddleware(getLogger: (req: Parameters<RequestHandler>[0]) => ErrorLogger): ErrorRequestHandler {
  return (err, req, res, next) => {
    if (res.headersSent) return next(err);
    const known = isAppError(err) ? err : typeof err === "object" && err !== null ? fromBodyParser(err) : undefined;
    const log = getLogger(req);
    if (known) {
      log.info({ code: known.code, status: known.status }, known.message);
      res.status(known.status).json(known.toBody());
      return;
    }
    log.error({ err }, "unhandled error");
    res.status(500).json(errorBody(500000));
  };
}

/** Final handler for unmatched routes. */
export const routeNotFound: RequestHandler = (_req, _res, next) => next(new AppError(404000));
