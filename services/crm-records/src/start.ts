import os from "node:os";
import path from "node:path";
import { loadOrCreateSecret } from "@crm/config";
import { uuidv7 } from "@crm/contracts";
import { listenForNotifications, openDatabase } from "@crm/database";
import { openEventBus, OutboxRelay } from "@crm/event-bus";
import { createLogger } from "@crm/logger";
import { outboxBacklog } from "@crm/telemetry";
import { listen, mountChecksInOneLayer, serviceAppDevicesOf, startRetention, startService, startServiceTracing, type Retention, type RunningService } from "@crm/service-kit";
import { createApp } from "./app";
import { recordDevicesOf, type RecordsConfig } from "./config";
import { createPrismaClient } from "./persistence/prisma";
import { idempotentCreateRetentionRule } from "./persistence/idempotent-create";
import { listCursorValueRetentionRule } from "./persistence/list-cursor-values";
import { outboxRetentionRule } from "./persistence/outbox-retention";
import { trashRetentionRule } from "./persistence/trash-retention";
import { entityDefinitions } from "./entities";
import { auditRetentionRule } from "@crm/audit";
import { FEED_CHANNEL, SqlOutboxStore } from "./persistence/outbox.store";
import { FeedWaiters } from "./application/feed-waiters";

export const SERVICE_NAME = "crm-records";
export const MIGRATIONS_DIR = path.resolve(__dirname, "../prisma/migrations");
/**
 * Embedded, under a stream of writes, the relay lets a read wait up to this long for more rows
 * (OutboxRelayOptions.lingerMs): PGlite's one thread runs every statement of the product, and each
 * publish costs it a mark and read here and a batch of statements in webhook-delivery. Without it, a
 * stream of creates shortened the relay's rounds and took 40% more publishes (D17). An event that comes alone is not
 * delayed.
 */
const EMBEDDED_OUTBOX_LINGER_MS = 40;
/**
 * Distributed, the same, shorter: a Kafka produce request costs kafkajs a fixed part far larger than
 * its part per event, so a relay that waits a little under load sends two to three times the events a
 * request, with half the relay's statements and consumer fetches (D17). Only a stream of writes waits (after a read of 4 or more
 * rows, and never 5 ms past the last commit): at 100 events/s a read finds one row and an event goes
 * at once, so Kafka's latency goal (fetch wait + 50 ms) keeps its margin (docs/performance.md, D17).
 */
const DISTRIBUTED_OUTBOX_LINGER_MS = 10;
/** A running crm-records, plus its retention job for tests and tools. */
export interface RecordsService extends RunningService {
  retention: Retention;
}

/** logger -> database -> Prisma -> bus -> outbox relay -> retention -> app -> listen; stop() undoes it in reverse. */
export async function start(config: Readonly<RecordsConfig>): Promise<RecordsService> {
  const logger = createLogger({ service: SERVICE_NAME, level: config.LOG_LEVEL, ...startServiceTracing(config, SERVICE_NAME) });
  const internalTokenSecret = loadOrCreateSecret(config.INTERNAL_TOKEN_SECRET, config.DATA_DIR, "internalToken");
  return startService(SERVICE_NAME, logger, async (undo) => {
    const db = undo.add(
      await openDatabase({
        url: config.DATABASE_URL,
        dataDir: config.DATA_DIR,
        schema: "records",
        migrationsDir: MIGRATIONS_DIR,
        migrate: config.MIGRATE_ON_START,
      }),
      (db) => db.close(),
    );
    const prisma = undo.add(createPrismaClient(db.adapter), (prisma) => prisma.$disconnect());
    const bus = undo.add(openEventBus({ brokers: config.KAFKA_BROKERS, clientId: SERVICE_NAME, logger }), (bus) => bus.close());
    // The change feed's waiting requests: woken by this process's relay, and by others' through NOTIFY.
    const feedWaiters = new FeedWaiters();
    const outboxStore = new SqlOutboxStore(db.sql, (businessIds) => feedWaiters.wake(businessIds));
    if (db.kind === "postgres" && config.DATABASE_URL) {
      const listener = listenForNotifications({
        url: config.DATABASE_URL,
        channel: FEED_CHANNEL,
        onNotify: (payload) => feedWaiters.wake(payload === "*" ? "*" : new Set(payload.split(","))),
        onReconnect: () => feedWaiters.wake("*"),
        warn: (err, message) => logger.warn({ err }, message),
      });
      undo.push(() => listener.close());
    }
    const relay = new OutboxRelay({
      store: outboxStore,
      bus,
      logger: logger.child({ component: "outbox-relay" }),
      holder: `${SERVICE_NAME}:${os.hostname()}:${process.pid}:${uuidv7()}`,
      intervalMs: config.OUTBOX_POLL_INTERVAL_MS,
      serviceName: SERVICE_NAME,
      lingerMs: db.kind === "pglite" ? EMBEDDED_OUTBOX_LINGER_MS : DISTRIBUTED_OUTBOX_LINGER_MS,
    });
    relay.start();
    // Flushes what is pending once more; whatever cannot be published stays in the outbox.
    undo.push(() => relay.stop());
    undo.push(outboxBacklog.add(() => outboxStore.backlog()));
    const retention = undo.add(
      startRetention({
        rules: [
          outboxRetentionRule(prisma, config.EVENTS_RETENTION_DAYS * 86_400_000),
          idempotentCreateRetentionRule(prisma),
          listCursorValueRetentionRule(prisma),
          trashRetentionRule(prisma, entityDefinitions, config.TRASH_RETENTION_DAYS * 86_400_000),
          auditRetentionRule({ db: prisma, schema: "records", retentionDays: config.AUDIT_RETENTION_DAYS }),
        ],
        intervalMs: config.RETENTION_INTERVAL_MS,
        batchSize: config.RETENTION_BATCH_SIZE,
        logger,
      }),
      (retention) => retention.stop(),
    );

    mountChecksInOneLayer(config.LEAN_REQUEST_CONTEXT);
    const app = createApp({
      logger,
      prisma,
      internalTokenSecret,
      onCommitted: () => relay.kick(),
      sql: db.sql,
      parallelQueries: db.kind === "postgres",
      includeMaxPerRelation: config.INCLUDE_MAX_PER_RELATION,
      feedWaiters,
      devices: recordDevicesOf(config),
      appDevices: serviceAppDevicesOf(config),
      readiness: [
        { name: "database", check: () => db.ping() },
        { name: "bus", check: () => bus.ping() },
      ],
    });
    const server = undo.listening(await listen(app, config.PORT, config.HOST), config.SHUTDOWN_DRAIN_MS);
    logger.info({ url: server.url, database: db.kind, bus: bus.kind }, "crm-records listening");
    return { url: server.url, port: server.port, retention };
  });
}
