export { errorCatalogue, ErrorCodes, type ErrorCode, type ErrorName } from "./catalogue";
export { AppError, errorBody, isAppError, isErrorCode, type AppErrorOptions, type ErrorBody, type ErrorDetail } from "./app-error";
export { errors, validationError, type ErrorConstructor } from "./errors";
export { zodIssuesToDetails, parseOrThrow } from "./zod";
export { bodyReadError, errorMiddleware, routeNotFound, type ErrorLogger } from "./middleware";
export {
  DependencyUnavailableError,
  isDependencyUnavailable,
  isOutcomeInDoubt,
  OUTCOME_IN_DOUBT_HEADER,
  UNAVAILABLE_RETRY_AFTER_S,
  type WriteOutcome,
} from "./dependency";
