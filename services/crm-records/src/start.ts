import os from "node:os";
import path from "node:path";
import { loadOrCreateSecret } from "@crm/config";
import { uuidv7 } from "@crm/contracts";
import { openDatabase } from "@crm/database";
import { openEventBus, OutboxRelay } from "@crm/event-bus";
import { createLogger } from "@crm/logger";
import { listen, startRetention, type Retention, type RunningService } from "@crm/service-kit";
import { createApp } from "./app";
import type { RecordsConfig } from "./config";
import { createPrismaClient } from "./persistence/prisma";
import { outboxRetentionRule } from "./persistence/outbox-retention";
import { PrismaOutboxStore } from "./persistence/prisma-outbox.store";

export const SERVICE_NAME = "crm-records";
export const MIGRATIONS_DIR = path.resolve(__dirname, "../prisma/migrations");
/** Shared with the gateway and the other services in single-machine mode (file name under DATA_DIR/secrets). */
export const INTERNAL_TOKEN_SECRET_NAME = "internal-token-secret";

/** A running crm-records, plus its retention job for tests and tools. */
export interface RecordsService extends RunningService {
  retention: Retention;
}

/** logger -> database -> Prisma -> bus -> outbox relay -> retention -> app -> listen; stop() undoes it in reverse. */
export async function start(config: RecordsConfig): Promise<RecordsService> {
  const logger = createLogger({ service: SERVICE_NAME, level: config.LOG_LEVEL });
  const internalTokenSecret = loadOrCreateSecret(config.INTERNAL_TOKEN_SECRET, config.DATA_DIR, INTERNAL_TOKEN_SECRET_NAME);
  const db = await openDatabase({
    url: config.DATABASE_URL,
    dataDir: config.DATA_DIR,
    schema: "records",
    migrationsDir: MIGRATIONS_DIR,
    migrate: config.MIGRATE_ON_START,
  });
  const prisma = createPrismaClient(db.adapter);
  const bus = openEventBus({ brokers: config.KAFKA_BROKERS, clientId: SERVICE_NAME, logger });
  const relay = new OutboxRelay({
    store: new PrismaOutboxStore(prisma),
    bus,
    logger: logger.child({ component: "outbox-relay" }),
    holder: `${SERVICE_NAME}:${os.hostname()}:${process.pid}:${uuidv7()}`,
    intervalMs: config.OUTBOX_POLL_INTERVAL_MS,
  });
  relay.start();
  const retention = startRetention({
    rules: [outboxRetentionRule(prisma, config.OUTBOX_RETENTION_MS)],
    intervalMs: config.RETENTION_INTERVAL_MS,
    batchSize: config.RETENTION_BATCH_SIZE,
    logger,
  });

  const app = createApp({
    logger,
    prisma,
    internalTokenSecret,
    onCommitted: () => relay.kick(),
    parallelQueries: db.kind === "postgres",
    includeMaxPerRelation: config.INCLUDE_MAX_PER_RELATION,
    readiness: [
      { name: "database", check: () => db.ping() },
      { name: "bus", check: () => bus.ping() },
    ],
  });
  const server = await listen(app, config.PORT, config.HOST);
  logger.info({ url: server.url, database: db.kind, bus: bus.kind }, "crm-records listening");

  let stopped: Promise<void> | undefined;
  return {
    name: SERVICE_NAME,
    url: server.url,
    port: server.port,
    retention,
    stop: () =>
      (stopped ??= (async () => {
        await server.close();
        // Flushes what is pending once more; whatever cannot be published stays in the outbox.
        await relay.stop();
        await retention.stop();
        await bus.close();
        await prisma.$disconnect();
        await db.close();
        logger.info("crm-records stopped");
      })()),
  };
}
