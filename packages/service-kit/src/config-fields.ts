import { env, z } from "@crm/config";

/** Variables every internal service reads; each service spreads these into its own config object. */
export const serviceConfigFields = {
  HOST: z.string().default("127.0.0.1"),
  DATA_DIR: z.string().default("./.data"),
  DATABASE_URL: env.postgresUrl().optional(),
  REDIS_URL: env.redisUrl().optional(),
  KAFKA_BROKERS: env.csv().optional(),
  /** Shared by the gateway and every service; generated under DATA_DIR when unset (single machine). */
  INTERNAL_TOKEN_SECRET: z.string().min(32, "must be at least 32 characters").optional(),
  LOG_LEVEL: env.logLevel(),
  /** Apply migrations at start with a real DATABASE_URL (always done in embedded mode). */
  MIGRATE_ON_START: env.bool(false),
};
