import {
  API_KEY_ALLOWED_IPS_MAX,
  AUDIT_PER_PAGE_MAX,
  auditActions,
  allPermissions,
  CUSTOM_FIELD_LIMITS,
  customFieldTypes,
  eventCatalogue,
  INTERNAL_CAPABILITIES_PATH,
  INTERNAL_TOKEN_HEADER,
  identityCapabilitiesSchema,
  recordContracts,
  recordEntities,
  webhookCapabilitiesSchema,
  type z,
  type IdentityCapabilities,
  type WebhookCapabilities,
} from "@crm/contracts";
import { errors } from "@crm/errors";
import { CASTS, DEFAULT_PER_PAGE, FILTER_OPERATORS, MAX_PER_PAGE, MAX_WHERE_CONDITIONS, MAX_WHERE_DEPTH, MAX_WHERE_LENGTH } from "@crm/query-language";
import { BODY_LIMIT_BYTES, signInternalToken } from "@crm/service-kit";
import type { GatewayConfig } from "../config";
import { type Upstream, UpstreamPool } from "../http/upstream-pool";

type GatewayPart = Pick<GatewayConfig, "RATE_LIMIT_MAX" | "RATE_LIMIT_WINDOW_MS">;

/**
 * `GET /api/v1/capabilities`: what this deployment offers, derived from the shared definitions and
 * from the settings each owning service reports it runs with (identity's, webhook-delivery's).
 */
export function buildCapabilities(config: GatewayPart, identity: IdentityCapabilities, webhooks: WebhookCapabilities) {
  return {
    version: "v1",
    entities: recordEntities.map((name) => ({
      name,
      path: `/api/v1/${name}`,
      relations: Object.entries(recordContracts[name].relations).map(([relation, spec]) => ({ name: relation, default: spec.default })),
    })),
    events: eventCatalogue,
    /** What the audit log's `action` filter takes (extensions §E7): each name, or `prefix.*` for a group. */
    auditActions,
    scopes: allPermissions,
    filterOperators: FILTER_OPERATORS,
    casts: CASTS,
    limits: {
      rateLimit: { max: config.RATE_LIMIT_MAX, windowMs: config.RATE_LIMIT_WINDOW_MS },
      perPageMax: MAX_PER_PAGE,
      perPageDefault: DEFAULT_PER_PAGE,
      bodyBytesMax: BODY_LIMIT_BYTES,
      accessTokenTtlS: identity.accessTokenTtlS,
      refreshTokenTtlS: identity.refreshTokenTtlS,
      apiKeyRateLimitMax: identity.apiKeyRateLimitMax,
      apiKeyAllowedIpsMax: API_KEY_ALLOWED_IPS_MAX,
      webhookTimeoutMs: webhooks.webhookTimeoutMs,
      webhookRetryDelaysMs: webhooks.webhookRetryDelaysMs,
      webhookRetryIntervalMs: webhooks.webhookRetryIntervalMs,
      webhookRetryBatchSize: webhooks.webhookRetryBatchSize,
      whereMaxLength: MAX_WHERE_LENGTH,
      whereMaxConditions: MAX_WHERE_CONDITIONS,
      whereMaxDepth: MAX_WHERE_DEPTH,
      auditPerPageMax: AUDIT_PER_PAGE_MAX,
      // Extensions §E4: per entity and business, archived definitions included.
      customFieldsPerEntityMax: CUSTOM_FIELD_LIMITS.perEntity,
      customFieldsUniquePerEntityMax: CUSTOM_FIELD_LIMITS.uniquePerEntity,
      customFieldOptionsMax: CUSTOM_FIELD_LIMITS.optionsMax,
      customFieldTextMaxLength: CUSTOM_FIELD_LIMITS.textMaxLength,
      customFieldLongTextMaxLength: CUSTOM_FIELD_LIMITS.longTextMaxLength,
    },
    customFieldTypes,
    authStrategies: [
      { name: "jwt", header: "Authorization: Bearer <ACCESS_TOKEN>" },
      { name: "apiKey", header: "X-Api-Key: <API_KEY>", alternative: "Authorization: Bearer svc_..." },
    ],
    signUpOpen: identity.signUpOpen,
  };
}

export type Capabilities = ReturnType<typeof buildCapabilities>;

export interface CapabilitiesSourceOptions {
  config: GatewayPart;
  identityUrl: Upstream;
  webhookDeliveryUrl: Upstream;
  internalTokenSecret: string;
  /** How long a composed document is served before the services are asked again. */
  cacheMs?: number;
  timeoutMs?: number;
}

/**
 * Composes the capabilities from the owning services' parts: asked on the first request, then again
 * when the cached document is older than `cacheMs` (a service restarted with other settings shows
 * within that time). One question in flight at a time; a failed refresh keeps serving the last
 * document, and with none yet the caller gets 503000.
 */
export class CapabilitiesSource {
  private cached: { document: Capabilities; at: number } | undefined;
  private inFlight: Promise<Capabilities> | undefined;
  private readonly cacheMs: number;
  private readonly timeoutMs: number;
  private readonly identity: UpstreamPool<string>;
  private readonly webhookDelivery: UpstreamPool<string>;

  constructor(private readonly options: CapabilitiesSourceOptions) {
    this.identity = new UpstreamPool(options.identityUrl, (url) => url);
    this.webhookDelivery = new UpstreamPool(options.webhookDeliveryUrl, (url) => url);
    this.cacheMs = options.cacheMs ?? 60_000;
    this.timeoutMs = options.timeoutMs ?? 5_000;
  }

  async get(): Promise<Capabilities> {
    if (this.cached && Date.now() - this.cached.at < this.cacheMs) return this.cached.document;
    this.inFlight ??= this.compose().finally(() => (this.inFlight = undefined));
    try {
      return await this.inFlight;
    } catch (err) {
      if (this.cached) return this.cached.document;
      throw err;
    }
  }

  private async compose(): Promise<Capabilities> {
    const [identity, webhooks] = await Promise.all([this.ask(this.identity, identityCapabilitiesSchema), this.ask(this.webhookDelivery, webhookCapabilitiesSchema)]);
    const document = buildCapabilities(this.options.config, identity, webhooks);
    this.cached = { document, at: Date.now() };
    return document;
  }

  private async ask<T>(replicas: UpstreamPool<string>, schema: z.ZodType<T>): Promise<T> {
    try {
      const [response, baseUrl] = await replicas.send(true, async (baseUrl) => {
        const response = await fetch(new URL(INTERNAL_CAPABILITIES_PATH, baseUrl), {
          headers: { [INTERNAL_TOKEN_HEADER]: signInternalToken({}, this.options.internalTokenSecret) },
          signal: AbortSignal.timeout(this.timeoutMs),
        });
        return [response, baseUrl] as const;
      });
      if (!response.ok) throw new Error(`${baseUrl} answered ${response.status}`);
      return schema.parse(await response.json());
    } catch (cause) {
      throw errors.unavailable(undefined, { cause });
    }
  }
}
