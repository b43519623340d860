export { AccessTokenCodec, type AccessTokenClaims } from "./access-token";
export { API_KEY_PATTERN, API_KEY_PREFIX, API_KEY_VISIBLE_CHARS, generateApiKey, digestApiKey, looksLikeApiKey } from "./api-key-format";
export {
  AUTH_STATE_VERSION,
  effectivePermissions,
  parseAccessTokenVerdicts,
  parseApiKeyAuthState,
  parseUserAuthState,
  type AccessTokenQuery,
  type AccessTokenVerdict,
  type ApiKeyAuthState,
  type ApiKeyRateLimit,
  type UserAuthState,
} from "./auth-state";
export {
  AuthCache,
  authKeys,
  internalAuthPaths,
  ACCESS_TOKEN_RESOLVE_MAX,
  API_KEY_USE_REPORT_MAX,
  AUTH_STATE_TTL_MS,
  REVOKED,
  UNKNOWN_API_KEY_TTL_MS,
} from "./auth-cache";
export { AllowList, canonicalAddress, normalizeAllowedIp } from "./ip-allow-list";
