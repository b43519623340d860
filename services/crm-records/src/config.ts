import { env, parseEnv, z } from "@crm/config";
import { DEFAULT_INCLUDE_MAX_PER_RELATION } from "@crm/contracts";
import { retentionConfigFields, serviceConfigFields } from "@crm/service-kit";

export const recordsConfigSchema = z.object({
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

export type RecordsConfig = Readonly<z.infer<typeof recordsConfigSchema>>;

export function loadConfig(source: NodeJS.ProcessEnv = process.env): RecordsConfig {
  return parseEnv(recordsConfigSchema, source);
}
