import { auditConfigFields } from "@crm/audit";
import { env, parseEnv, z } from "@crm/config";
import { DEFAULT_KAFKA_CONSUMER_SETTINGS } from "@crm/event-bus";
import { retentionConfigFields, serviceConfigFields } from "@crm/service-kit";
import { MIN_KEY_LENGTH } from "./domain/secret-keyring";

/** Comma list of keys: the first seals every secret written from now on, every one of them reads. */
const secretKeyList = env.csv().pipe(
  z
    .array(z.string().min(MIN_KEY_LENGTH, `each key must be at least ${MIN_KEY_LENGTH} characters`))
    .min(1, "expected at least one key")
    .refine((keys) => new Set(keys).size === keys.length, "a key is listed twice"),
);

/** Everything the webhook-delivery service reads from the environment (decisions §1). */
export const configSchema = z.object({
  ...serviceConfigFields,
  ...retentionConfigFields,
  ...auditConfigFields,
  PORT: env.port(4003),
  /** Bound on one whole attempt: DNS, connect, headers and body. */
  WEBHOOK_TIMEOUT_MS: env.int(10_000, 1),
  /** Delay before the 1st, 2nd, ... retry; attempts in all = delays + 1. */
  WEBHOOK_RETRY_DELAYS_MS: env.intList().default([60_000, 300_000]),
  WEBHOOK_RETRY_INTERVAL_MS: env.int(30_000, 1),
  WEBHOOK_RETRY_BATCH_SIZE: env.int(10, 1),
  WEBHOOK_ALLOW_PRIVATE_TARGETS: env.bool(false),
  /** Attempts in flight per process at most, and per business (so one business cannot take them all). */
  WEBHOOK_MAX_IN_FLIGHT: env.int(50, 1),
  WEBHOOK_MAX_IN_FLIGHT_PER_BUSINESS: env.int(20, 1),
  /** Kafka consumer: longest a fetch waits for new events (bounds the added latency on some brokers). */
  KAFKA_FETCH_MAX_WAIT_MS: env.int(DEFAULT_KAFKA_CONSUMER_SETTINGS.fetchMaxWaitMs, 1),
  /** Kafka consumer: a member silent this long is dropped and its partitions reassigned. */
  KAFKA_SESSION_TIMEOUT_MS: env.int(DEFAULT_KAFKA_CONSUMER_SETTINGS.sessionTimeoutMs, 1),
  KAFKA_HEARTBEAT_INTERVAL_MS: env.int(DEFAULT_KAFKA_CONSUMER_SETTINGS.heartbeatIntervalMs, 1),
  /** Kafka consumer: handled offsets are committed at most this often (and this long after the last event). */
  KAFKA_COMMIT_INTERVAL_MS: env.int(DEFAULT_KAFKA_CONSUMER_SETTINGS.commitIntervalMs, 1),
  /** Unset: one key generated under DATA_DIR/secrets/webhook-secret-key (single machine). */
  WEBHOOK_SECRET_KEYS: secretKeyList.optional(),
  /** A SUCCESS or FAILED delivery (and its attempts) is deleted this long after its last activity (30 days). */
  DELIVERY_RETENTION_MS: env.int(30 * 24 * 3_600_000, 1),
  /** How often secrets not yet under the current key are re-encrypted (also once at start). */
  WEBHOOK_SECRET_REENCRYPT_INTERVAL_MS: env.int(3_600_000, 1),
  /** Deliveries sent on undici's dispatch interface rather than through its `request()` (docs/performance.md D10). */
  UNDICI_DISPATCH: env.bool(true),
  /** First attempts leased by the statement that creates them, and sent as their claim read them (docs/performance.md D19). */
  WEBHOOK_LEASE_ON_CREATE: env.bool(true),
  /** Events of businesses not known to have subscribers looked up first, in a small statement (docs/performance.md D27). */
  WEBHOOK_CONSUMER_LOOKUP_FIRST: env.bool(true),
  /** Opened signing secrets kept for a webhook's later attempts rather than opened for each (docs/performance.md D28). */
  WEBHOOK_KEPT_SECRETS: env.bool(true),
});

export type WebhookDeliveryConfig = z.infer<typeof configSchema>;

export function loadConfig(source: NodeJS.ProcessEnv = process.env): Readonly<WebhookDeliveryConfig> {
  return parseEnv(configSchema, source);
}
