import path from "node:path";
import { loadOrCreateSecret } from "@crm/config";
import { openDatabase } from "@crm/database";
import { openKvStore } from "@crm/kv-store";
import { createLogger } from "@crm/logger";
import { listen, mountChecksInOneLayer, serviceAppDevicesOf, startRetention, startService, startServiceTracing, type Retention, type RunningService } from "@crm/service-kit";
import { createApp } from "./app";
import type { IdentityConfig } from "./config";
import { PrismaClient } from "./persistence/prisma";
import { sessionRetentionRules } from "./persistence/session-retention";
import { auditRetentionRule } from "@crm/audit";

export const MIGRATIONS_DIR = path.resolve(__dirname, "../prisma/migrations");

/** A running identity service, plus its retention job for tests and tools. */
export interface IdentityService extends RunningService {
  retention: Retention;
}

export async function start(config: Readonly<IdentityConfig>): Promise<IdentityService> {
  const logger = createLogger({ service: "identity", level: config.LOG_LEVEL, ...startServiceTracing(config, "identity") });
  const jwtSecret = loadOrCreateSecret(config.JWT_SECRET, config.DATA_DIR, "jwt");
  const internalTokenSecret = loadOrCreateSecret(config.INTERNAL_TOKEN_SECRET, config.DATA_DIR, "internalToken");
  return startService("identity", logger, async (undo) => {
    const db = undo.add(
      await openDatabase({
        url: config.DATABASE_URL,
        dataDir: config.DATA_DIR,
        schema: "identity",
        migrationsDir: MIGRATIONS_DIR,
        migrate: config.MIGRATE_ON_START,
      }),
      (db) => db.close(),
    );
    const prisma = undo.add(new PrismaClient({ adapter: db.adapter }), (prisma) => prisma.$disconnect());
    const kv = undo.add(openKvStore(config.REDIS_URL), (kv) => kv.close());
    mountChecksInOneLayer(config.LEAN_REQUEST_CONTEXT);
    const app = createApp({
      config,
      logger,
      prisma,
      kv,
      jwtSecret,
      internalTokenSecret,
      readiness: [
        { name: "database", check: () => db.ping() },
        { name: "kv", check: () => kv.ping() },
      ],
      appDevices: serviceAppDevicesOf(config),
    });
    const server = undo.listening(await listen(app, config.PORT, config.HOST), config.SHUTDOWN_DRAIN_MS);
    logger.info({ url: server.url }, "identity listening");
    const retention = undo.add(
      startRetention({
        rules: [
          ...sessionRetentionRules(prisma, config.SESSION_RETENTION_GRACE_MS),
          auditRetentionRule({ db: prisma, schema: "identity", retentionDays: config.AUDIT_RETENTION_DAYS }),
        ],
        intervalMs: config.RETENTION_INTERVAL_MS,
        batchSize: config.RETENTION_BATCH_SIZE,
        logger,
      }),
      (retention) => retention.stop(),
    );
    return { url: server.url, port: server.port, retention };
  });
}
