import { env, parseEnv, z } from "@crm/config";
import { DEFAULT_INCLUDE_MAX_PER_RELATION } from "@crm/contracts";
import { retentionConfigFields, serviceConfigFields } from "@crm/service-kit";

/** Everything the crm-records service reads from the environment (decisions §1). */
export const configSchema = z.object({
  ...serviceConfigFields,
  ...retentionConfigFields,
  PORT: env.port(4002),
  /** How often the outbox relay looks for unsent events when no write has kicked it. */
  OUTBOX_POLL_INTERVAL_MS: env.int(1000, 10),
  /** Most related records one parent carries per to-many relation in a response (newest first). */
  INCLUDE_MAX_PER_RELATION: env.int(DEFAULT_INCLUDE_MAX_PER_RELATION, 1),
  /** A published outbox row (with its full payload) is deleted this long after it was sent (7 days). */
  OUTBOX_RETENTION_MS: env.int(7 * 24 * 3_600_000, 1),
});

export type RecordsConfig = z.infer<typeof configSchema>;

export function loadConfig(source: NodeJS.ProcessEnv = process.env): Readonly<RecordsConfig> {
  return parseEnv(configSchema, source);
}
