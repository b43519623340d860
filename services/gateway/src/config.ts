import { env, parseEnv, z } from "@crm/config";
import { normalizeAllowedIp } from "@crm/auth-cache";
import { baseConfigFields } from "@crm/service-kit";

/** Everything the gateway reads from the environment (decisions §1). */
export const configSchema = z
  .object({
    ...baseConfigFields,
    PORT: env.port(3000),
    /** The gateway is the one process meant to be reached from outside. */
    HOST: z.string().default("0.0.0.0"),
    /** Each service's base URL, or its replicas' separated by commas: round-robin, one retry on another (docs/operations.md, "Rolling restarts"). */
    IDENTITY_URL: env.urls().default(["http://127.0.0.1:4001"]),
    CRM_RECORDS_URL: env.urls().default(["http://127.0.0.1:4002"]),
    WEBHOOK_DELIVERY_URL: env.urls().default(["http://127.0.0.1:4003"]),
    /** Shared with identity; generated under DATA_DIR when unset (single machine). */
    JWT_SECRET: env.secret().optional(),
    /**
     * Seals stored idempotent answers (they hold one-time secrets). Generated under DATA_DIR when unset on
     * a single machine; required with REDIS_URL (below).
     */
    IDEMPOTENCY_ENCRYPTION_KEY: env.secret().optional(),
    RATE_LIMIT_MAX: env.int(50, 1),
    RATE_LIMIT_WINDOW_MS: env.int(60000, 1),
    /** The rate limit counted and its headers set by the gateway's own middleware, not express-rate-limit's (docs/performance.md D6). */
    RATE_LIMIT_OWN_MIDDLEWARE: env.bool(true),
    CORS_ALLOWED_ORIGINS: env.csv().default([]),
    /**
     * Addresses or CIDR blocks of the proxies in front of the gateway (extensions §E3.2). Only when the
     * socket's peer is one of them is X-Forwarded-For read, right to left, skipping these; default none:
     * the client address is the peer's. No other header is ever trusted.
     */
    TRUSTED_PROXIES: env.csv().default([]),
    /** Replaced by TRUSTED_PROXIES: a hop count trusted X-Forwarded-For from any peer. Refused when set. */
    TRUST_PROXY_HOPS: z.string().optional(),
    /** Time a forwarded request may take before the gateway answers 503000. */
    UPSTREAM_TIMEOUT_MS: env.int(30000, 1),
    /** Largest answer body the gateway buffers from a service; beyond it the caller gets 500000. */
    UPSTREAM_MAX_RESPONSE_BYTES: env.int(32 * 1024 * 1024, 1024),
    /** How often each gateway reports API-key use to identity (`lastUsedAt`); at most this stale. */
    API_KEY_USAGE_FLUSH_MS: env.int(15_000, 100),
    /**
     * Continue a client's W3C `traceparent` (its trace id in the spans and logs of the request) instead of
     * starting a new trace at the edge: only behind a proxy that sets or vets it.
     */
    TRUST_TRACEPARENT: env.bool(false),
    /** One signed internal token per caller and second, handed to every forward of that second (docs/performance.md D9). */
    INTERNAL_TOKEN_REUSE: env.bool(true),
    /** Forwarded requests run the gateway's handlers without Express's router (docs/performance.md D2). */
    FORWARD_WITHOUT_ROUTER: env.bool(true),
    /** In the single process, forwards call the service's app instead of loopback HTTP (docs/performance.md D11). */
    FORWARD_IN_PROCESS: env.bool(true),
    /** Forwards read on undici's dispatch interface rather than through its `request()` (docs/performance.md D10). */
    UNDICI_DISPATCH: env.bool(true),
    /** Requests and responses built with Express's prototypes rather than swapped per request (docs/performance.md D1). */
    EXPRESS_PROTOTYPES_AT_BIRTH: env.bool(true),
    /** Port of the gateway's own GET /metrics, /healthz and /readyz (with each dependency) listener; unset: none. */
    METRICS_PORT: z.coerce.number().int().min(0).max(65535).optional(),
    /** Address of that listener: loopback unless an operator opens it to a scraper's network. */
    METRICS_HOST: z.string().default("127.0.0.1"),
  })
  .superRefine((config, ctx) => {
    if (config.TRUST_PROXY_HOPS !== undefined) {
      ctx.addIssue({ code: "custom", path: ["TRUST_PROXY_HOPS"], message: "replaced by TRUSTED_PROXIES: list your proxies' addresses or CIDR blocks instead" });
    }
    config.TRUSTED_PROXIES.forEach((entry, i) => {
      if (!normalizeAllowedIp(entry))
        ctx.addIssue({ code: "custom", path: ["TRUSTED_PROXIES", i], message: `not an IPv4 or IPv6 address or CIDR block: ${JSON.stringify(entry)}` });
    });
    // Gateways sharing a Redis share its idempotency entries; one with a key of its own (generated in
    // its own DATA_DIR) could read none of the others' and refuse their keys' retries (docs/security.md, rule 10).
    if (config.REDIS_URL !== undefined && config.IDEMPOTENCY_ENCRYPTION_KEY === undefined) {
      ctx.addIssue({ code: "custom", path: ["IDEMPOTENCY_ENCRYPTION_KEY"], message: "required with REDIS_URL: the same value on every gateway sharing that Redis" });
    }
  });

export type GatewayConfig = z.infer<typeof configSchema>;

export function loadConfig(source: NodeJS.ProcessEnv = process.env): Readonly<GatewayConfig> {
  return parseEnv(configSchema, source);
}
