export { errorCatalogue, ErrorCodes, type ErrorCode } from "./catalogue";
export { AppError, errorBody, isAppError, isErrorCode, validationError, type ErrorBody, type ErrorDetail } from "./app-error";
export { zodIssuesToDetails, parseOrThrow } from "./zod";
export { errorMiddleware, routeNotFound, type ErrorLogger } from "./middleware";
