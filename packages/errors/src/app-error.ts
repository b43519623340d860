import { errorCatalogue, type ErrorCode } from "./catalogue";

/** One validation problem: `path` is dot-joined (`items.0.quantity`), `message` is for humans. */
export interface ErrorDetail {
  path: string;
  message: string;
}

export interface ErrorBody {
  success: false;
  error: { code: ErrorCode; message: string; details?: ErrorDetail[] };
}

export interface AppErrorOptions {
  /** Internal; only ever logged. */
  cause?: unknown;
  /** Seconds after which the request may succeed: the answer's `Retry-After` (429, 503). */
  retryAfterS?: number;
}

/**
 * The error domain code throws. The client sees the catalogue message and `details` (and
 * `Retry-After` when the error says when to try again); `cause` is internal and only ever logged.
 */
export class AppError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly details?: ErrorDetail[];
  readonly retryAfterS?: number;

  constructor(code: ErrorCode, details?: ErrorDetail[], options?: AppErrorOptions) {
    super(errorCatalogue[code].message, options && "cause" in options ? { cause: options.cause } : undefined);
    this.name = "AppError";
    this.code = code;
    this.status = errorCatalogue[code].status;
    if (details && details.length > 0) this.details = details;
    if (options?.retryAfterS !== undefined) this.retryAfterS = Math.max(1, Math.ceil(options.retryAfterS));
  }

  toBody(): ErrorBody {
    return errorBody(this.code, this.details);
  }
}

export function errorBody(code: ErrorCode, details?: ErrorDetail[]): ErrorBody {
  const error: ErrorBody["error"] = { code, message: errorCatalogue[code].message };
  if (details && details.length > 0) error.details = details;
  return { success: false, error };
}

export function isAppError(value: unknown): value is AppError {
  return value instanceof AppError;
}

export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === "number" && Object.hasOwn(errorCatalogue, value);
}
