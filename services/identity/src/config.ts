import { auditConfigFields } from "@crm/audit";
import { env, parseEnv, z } from "@crm/config";
import { RATE_LIMIT_KEY_MAX_DEFAULT } from "@crm/contracts";
import { retentionConfigFields, serviceConfigFields } from "@crm/service-kit";

/** Everything the identity service reads from the environment (decisions §1). */
export const configSchema = z.object({
  ...serviceConfigFields,
  ...retentionConfigFields,
  ...auditConfigFields,
  PORT: env.port(4001),
  /** Access-token signing key; generated under DATA_DIR when unset, exactly as the gateway does. */
  JWT_SECRET: env.secret().optional(),
  ACCESS_TOKEN_TTL_S: env.int(1800, 1),
  REFRESH_TOKEN_TTL_S: env.int(86400, 1),
  /** Expired or revoked sessions and expired refresh tokens are deleted this long after (1 day). */
  SESSION_RETENTION_GRACE_MS: env.int(24 * 3_600_000, 0),
  ALLOW_SIGN_UP: env.bool(true),
  /** log2 of scrypt's N. 17 is OWASP's recommendation; tests lower it to stay fast. */
  PASSWORD_HASH_COST: z.coerce.number().int().min(10).max(20).default(17),
  /**
   * Password hashes run at once: each holds one of libuv's threads (4 by default, shared with DNS
   * lookups, file reads and zlib; in the single process also the webhook deliveries' lookups) and
   * 128 MiB at cost 17. Keep it below UV_THREADPOOL_SIZE.
   */
  PASSWORD_HASH_CONCURRENCY: env.int(2, 1),
  /** Hashes that may wait for a slot; one more is answered 503000 with Retry-After at once. */
  PASSWORD_HASH_QUEUE: env.int(16, 0),
  /** Failed sign-ins for one email from one address, within SIGN_IN_FAILURE_WINDOW_MS, before a lock. */
  SIGN_IN_MAX_FAILURES: env.int(10, 1),
  SIGN_IN_FAILURE_WINDOW_MS: env.int(15 * 60_000, 1000),
  /** First lock period; doubles with every further failure, never beyond SIGN_IN_LOCK_MAX_MS. */
  SIGN_IN_LOCK_BASE_MS: env.int(30_000, 1000),
  SIGN_IN_LOCK_MAX_MS: env.int(15 * 60_000, 1000),
  /** The highest `rateLimit.max` a key may be given (extensions §E3.2). */
  RATE_LIMIT_KEY_MAX: env.int(RATE_LIMIT_KEY_MAX_DEFAULT, 1),
});

export type IdentityConfig = z.infer<typeof configSchema>;

export function loadConfig(source: NodeJS.ProcessEnv = process.env): Readonly<IdentityConfig> {
  return parseEnv(configSchema, source);
}
