import { env, z } from "@crm/config";
import { telemetryConfigFields } from "./telemetry";

/** Variables every service reads, the gateway included; each spreads these into its own config object. */
export const baseConfigFields = {
  HOST: z.string().default("127.0.0.1"),
  DATA_DIR: z.string().default("./.data"),
  REDIS_URL: env.redisUrl().optional(),
  /** Shared by the gateway and every service; generated under DATA_DIR when unset (single machine). */
  INTERNAL_TOKEN_SECRET: env.secret().optional(),
  LOG_LEVEL: env.logLevel(),
  ...telemetryConfigFields,
};

/** The base plus what every service behind the gateway reads: its database, the bus, migrations. */
export const serviceConfigFields = {
  ...baseConfigFields,
  DATABASE_URL: env.postgresUrl().optional(),
  KAFKA_BROKERS: env.csv().optional(),
  /** Apply migrations at start with a real DATABASE_URL (always done in embedded mode). */
  MIGRATE_ON_START: env.bool(false),
};
