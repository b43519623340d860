import { allPermissions, eventCatalogue, recordContracts, recordEntities } from "@crm/contracts";
import { CASTS, DEFAULT_PER_PAGE, FILTER_OPERATORS, MAX_PER_PAGE, MAX_WHERE_CONDITIONS, MAX_WHERE_DEPTH, MAX_WHERE_LENGTH } from "@crm/query-language";
import { BODY_LIMIT_BYTES } from "@crm/service-kit";
import type { GatewayConfig } from "../config";

/** `GET /api/v1/capabilities`: what this deployment offers, derived from the shared definitions. */
export function buildCapabilities(config: GatewayConfig) {
  return {
    version: "v1",
    entities: recordEntities.map((name) => ({
      name,
      path: `/api/v1/${name}`,
      relations: Object.entries(recordContracts[name].relations).map(([relation, isDefault]) => ({ name: relation, default: isDefault })),
    })),
    events: eventCatalogue,
    scopes: allPermissions,
    filterOperators: FILTER_OPERATORS,
    casts: CASTS,
    limits: {
      rateLimit: { max: config.RATE_LIMIT_MAX, windowMs: config.RATE_LIMIT_WINDOW_MS },
      perPageMax: MAX_PER_PAGE,
      perPageDefault: DEFAULT_PER_PAGE,
      bodyBytesMax: BODY_LIMIT_BYTES,
      accessTokenTtlS: config.ACCESS_TOKEN_TTL_S,
      refreshTokenTtlS: config.REFRESH_TOKEN_TTL_S,
      webhookTimeoutMs: config.WEBHOOK_TIMEOUT_MS,
      webhookRetryDelaysMs: config.WEBHOOK_RETRY_DELAYS_MS,
      webhookRetryIntervalMs: config.WEBHOOK_RETRY_INTERVAL_MS,
      webhookRetryBatchSize: config.WEBHOOK_RETRY_BATCH_SIZE,
      whereMaxLength: MAX_WHERE_LENGTH,
      whereMaxConditions: MAX_WHERE_CONDITIONS,
      whereMaxDepth: MAX_WHERE_DEPTH,
    },
    authStrategies: [
      { name: "jwt", header: "Authorization: Bearer <ACCESS_TOKEN>" },
      { name: "apiKey", header: "X-Api-Key: <API_KEY>", alternative: "Authorization: Bearer svc_..." },
    ],
    signUpOpen: config.ALLOW_SIGN_UP,
  };
}
