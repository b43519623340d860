import { env, parseEnv, z } from "@crm/config";
import { serviceConfigFields } from "@crm/service-kit";

/** Everything the webhook-delivery service reads from the environment (decisions §1). */
export const configSchema = z.object({
  ...serviceConfigFields,
  PORT: env.port(4003),
  /** Bound on one whole attempt: DNS, connect, headers and body. */
  WEBHOOK_TIMEOUT_MS: env.int(10_000, 1),
  /** Delay before the 1st, 2nd, ... retry; attempts in all = delays + 1. */
  WEBHOOK_RETRY_DELAYS_MS: env.intList().default([60_000, 300_000]),
  WEBHOOK_RETRY_INTERVAL_MS: env.int(30_000, 1),
  WEBHOOK_RETRY_BATCH_SIZE: env.int(10, 1),
  WEBHOOK_ALLOW_PRIVATE_TARGETS: env.bool(false),
});

export type Config = z.infer<typeof configSchema>;

export function loadConfig(source: NodeJS.ProcessEnv = process.env): Readonly<Config> {
  return parseEnv(configSchema, source);
}
