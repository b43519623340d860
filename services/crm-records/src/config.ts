import { env, parseEnv, z } from "@crm/config";
import { serviceConfigFields } from "@crm/service-kit";

export const recordsConfigSchema = z.object({
  ...serviceConfigFields,
  PORT: env.port(4002),
  /** How often the outbox relay looks for unsent events when no write has kicked it. */
  OUTBOX_POLL_INTERVAL_MS: env.int(1000, 10),
});

export type RecordsConfig = Readonly<z.infer<typeof recordsConfigSchema>>;

export function loadConfig(source: NodeJS.ProcessEnv = process.env): RecordsConfig {
  return parseEnv(recordsConfigSchema, source);
}
