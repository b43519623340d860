import { env, z } from "@crm/config";
import type { ServiceAppDevices } from "./service-app";
import { telemetryConfigFields } from "./telemetry";

/** Variables every service reads, the gateway included; each spreads these into its own config object. */
export const baseConfigFields = {
  HOST: z.string().default("127.0.0.1"),
  DATA_DIR: z.string().default("./.data"),
  REDIS_URL: env.redisUrl().optional(),
  /** Shared by the gateway and every service; generated under DATA_DIR when unset (single machine). */
  INTERNAL_TOKEN_SECRET: env.secret().optional(),
  LOG_LEVEL: env.logLevel(),
  /**
   * On SIGTERM, how long a process keeps serving with /readyz at 503 before it closes its listeners
   * (ListeningServer.drain): at least the time a balancer takes to see it unready. 5 s by default:
   * a Kubernetes endpoint update or a balancer probing every 1-2 s; 0 stops at once.
   */
  SHUTDOWN_DRAIN_MS: env.int(5_000),
  /** Request loggers built on first use, a route's checks and handler as one layer (docs/performance.md D12). */
  LEAN_REQUEST_CONTEXT: env.bool(true),
  ...telemetryConfigFields,
};

/** The base plus what every service behind the gateway reads: its database, the bus, migrations. */
export const serviceConfigFields = {
  ...baseConfigFields,
  DATABASE_URL: env.postgresUrl().optional(),
  KAFKA_BROKERS: env.csv().optional(),
  /** Apply migrations at start with a real DATABASE_URL (always done in embedded mode). */
  MIGRATE_ON_START: env.bool(false),
  /** Plain JSON bodies read off the stream and parsed once, the rest by express.json (docs/performance.md D4). */
  JSON_BODY_OFF_THE_STREAM: env.bool(true),
};

/** The devices a service's app takes (createServiceApp), as its configuration sets them. */
export function serviceAppDevicesOf(config: { JSON_BODY_OFF_THE_STREAM: boolean; LEAN_REQUEST_CONTEXT: boolean }): ServiceAppDevices {
  return { bodiesOffTheStream: config.JSON_BODY_OFF_THE_STREAM, leanRequestContext: config.LEAN_REQUEST_CONTEXT };
}
