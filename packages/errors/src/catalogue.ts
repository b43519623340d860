// The one error catalogue: every code the API can answer with, its HTTP status and its exact message
// (interface §7, decisions §9), and the name code uses for it. Nothing else in the codebase spells a
// code, a status or a message: call sites throw `errors.notFound()`, never `new AppError(404001)`.
export const errorCatalogue = {
  400001: { name: "validationFailed", status: 400, message: "Validation failed" },
  400002: { name: "malformedJson", status: 400, message: "Malformed JSON body" },
  400011: { name: "invalidSortOrder", status: 400, message: "Invalid sorting order" },
  400019: { name: "invalidQuery", status: 400, message: "Invalid query format" },
  401000: { name: "authenticationRequired", status: 401, message: "Authentication required" },
  401001: { name: "invalidCredentials", status: 401, message: "Invalid credentials" },
  401010: { name: "invalidAccessToken", status: 401, message: "Invalid access token" },
  401011: { name: "accessTokenNotWhitelisted", status: 401, message: "Access token not found in whitelist" },
  401012: { name: "refreshTokenNotWhitelisted", status: 401, message: "Refresh token not found in whitelist" },
  401013: { name: "invalidRefreshToken", status: 401, message: "Invalid refresh token" },
  401014: { name: "insufficientPermissions", status: 401, message: "Insufficient permissions for this action" },
  401015: { name: "businessRequired", status: 401, message: "Business access required" },
  401020: { name: "apiKeyExpired", status: 401, message: "API key has expired" },
  401021: { name: "apiKeyRevoked", status: 401, message: "API key has been revoked" },
  401022: { name: "invalidApiKey", status: 401, message: "Invalid API key" },
  403000: { name: "forbidden", status: 403, message: "Forbidden resource" },
  403001: { name: "addressNotAllowed", status: 403, message: "IP address not allowed" },
  404000: { name: "routeNotFound", status: 404, message: "Route not found" },
  404001: { name: "notFound", status: 404, message: "Resource not found" },
  409001: { name: "alreadyExists", status: 409, message: "Resource already exists" },
  409002: { name: "idempotencyKeyReused", status: 409, message: "Idempotency key reused with a different request" },
  409003: { name: "hasDependents", status: 409, message: "Resource has dependent records" },
  409004: { name: "deliveryNotRetryable", status: 409, message: "Delivery is not in a retryable state" },
  409005: { name: "apiKeyNotActive", status: 409, message: "API key is not active" },
  409006: { name: "limitReached", status: 409, message: "Limit reached" },
  409007: { name: "notDeleted", status: 409, message: "Resource is not deleted" },
  409008: { name: "relatedRecordDeleted", status: 409, message: "Related record is deleted" },
  410000: { name: "cursorExpired", status: 410, message: "Cursor expired" },
  412000: { name: "preconditionFailed", status: 412, message: "Precondition failed" },
  413000: { name: "bodyTooLarge", status: 413, message: "Request body too large" },
  415000: { name: "unsupportedMediaType", status: 415, message: "Unsupported media type" },
  429000: { name: "tooManyRequests", status: 429, message: "Too many requests" },
  500000: { name: "internal", status: 500, message: "Internal server error" },
  503000: { name: "unavailable", status: 503, message: "Service unavailable" },
} as const satisfies Record<number, { name: string; status: number; message: string }>;

export type ErrorCode = keyof typeof errorCatalogue;

/** The name of a catalogue entry (`notFound` for 404001). */
export type ErrorName = (typeof errorCatalogue)[ErrorCode]["name"];

type CodeNamed<N extends ErrorName> = { [C in ErrorCode]: (typeof errorCatalogue)[C]["name"] extends N ? C : never }[ErrorCode];

/** Named codes, derived from the catalogue, for the rare place that compares codes (`ErrorCodes.notFound`). */
export const ErrorCodes = Object.freeze(Object.fromEntries(Object.entries(errorCatalogue).map(([code, entry]) => [entry.name, Number(code)]))) as {
  readonly [N in ErrorName]: CodeNamed<N>;
};
