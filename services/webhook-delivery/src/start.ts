import path from "node:path";
import { loadOrCreateSecret } from "@crm/config";
import { RECORDS_TOPIC } from "@crm/contracts";
import { openDatabase } from "@crm/database";
import { openEventBus } from "@crm/event-bus";
import { createLogger, type Logger } from "@crm/logger";
import { deliveryBacklog, deliveryLoad } from "@crm/telemetry";
import {
  listen,
  mountChecksInOneLayer,
  serviceAppDevicesOf,
  startPeriodicJob,
  startRetention,
  startService,
  startServiceTracing,
  type PeriodicJob,
  type Retention,
  type RunningService,
} from "@crm/service-kit";
import { createApp } from "./app";
import type { WebhookDeliveryConfig } from "./config";
import { createConcurrencyLimiter } from "./outbound/concurrency";
import { createDispatcher } from "./outbound/dispatcher";
import { SecretKeyring } from "./domain/secret-keyring";
import { createRecordsConsumer } from "./events/records.consumer";
import { PrismaClient } from "./generated/prisma/client";
import { DeliveryRepository } from "./persistence/delivery.repository";
import { deliveryRetentionRules } from "./persistence/delivery-retention";
import { auditRetentionRule } from "@crm/audit";
import { SecretReencryption } from "./persistence/secret-reencryption";
import { WebhookRepository } from "./persistence/webhook.repository";
import { AttemptExecutor } from "./application/attempt-executor";
import { DeliveryScheduler } from "./scheduler/delivery-scheduler";
import { FirstAttemptPoller } from "./scheduler/first-attempt-poller";
import { RetryScheduler } from "./scheduler/retry-scheduler";

export const SERVICE_NAME = "webhook-delivery";
/** The consumer group of this service on the records topic. */
export const CONSUMER_GROUP = "webhook-delivery";

// Attempts in flight per webhook at most: one slow receiver holds two slots, not all.
const MAX_IN_FLIGHT_PER_WEBHOOK = 2;
// How often an instance with room looks for first attempts nobody has claimed (another instance's
// overflow, or a crashed instance's): the added latency of those, against one cheap indexed query.
const FIRST_ATTEMPT_POLL_MS = 250;
// Margin of a claim over the time-out, for the database writes around the HTTP call.
const LEASE_MARGIN_MS = 30_000;
// Webhook rows per re-encryption batch: short statements, and a pass over a large table in bounded steps.
const REENCRYPT_BATCH_SIZE = 100;

export interface StartOptions {
  /** Another consumer group, so tests sharing one Kafka cluster do not split each other's partitions. */
  consumerGroupId?: string;
  logger?: Logger;
  /** The clock webhook changes are stamped with (a rotation's grace period ends from it); tests move it instead of sleeping. */
  now?: () => Date;
}

/** A running service plus the parts tests look into. */
export interface WebhookDeliveryService extends RunningService {
  prisma: PrismaClient;
  /** The retry cycle. */
  retries: RetryScheduler;
  /** Claims, rooms, backlog: which attempts this process makes, and when. */
  scheduler: DeliveryScheduler;
  deliveries: DeliveryRepository;
  /** Re-encryption of stored secrets under the current key (runs at start and on its interval). */
  secretReencryption: PeriodicJob & { counts: SecretReencryption["counts"] };
  /** Deletion of deliveries past DELIVERY_RETENTION_MS. */
  retention: Retention;
}

export async function start(config: Readonly<WebhookDeliveryConfig>, options: StartOptions = {}): Promise<WebhookDeliveryService> {
  const logger = options.logger ?? createLogger({ service: SERVICE_NAME, level: config.LOG_LEVEL, ...startServiceTracing(config, SERVICE_NAME) });
  const internalTokenSecret = loadOrCreateSecret(config.INTERNAL_TOKEN_SECRET, config.DATA_DIR, "internalToken");
  const keyring = new SecretKeyring(config.WEBHOOK_SECRET_KEYS ?? [loadOrCreateSecret(undefined, config.DATA_DIR, "webhookSecretKey")]);
  // Stops in reverse order of start: server, jobs, consumer, in-flight attempts, dispatcher, bus, database.
  return startService(SERVICE_NAME, logger, async (undo) => {
    const db = await openDatabase({
      url: config.DATABASE_URL,
      dataDir: config.DATA_DIR,
      schema: "webhooks",
      migrationsDir: path.resolve(__dirname, "../prisma/migrations"),
      migrate: config.MIGRATE_ON_START,
    });
    undo.push(() => db.close());
    const prisma = new PrismaClient({ adapter: db.adapter });
    undo.push(() => prisma.$disconnect());
    const bus = openEventBus({
      brokers: config.KAFKA_BROKERS,
      clientId: SERVICE_NAME,
      logger,
      consumer: {
        fetchMaxWaitMs: config.KAFKA_FETCH_MAX_WAIT_MS,
        sessionTimeoutMs: config.KAFKA_SESSION_TIMEOUT_MS,
        heartbeatIntervalMs: config.KAFKA_HEARTBEAT_INTERVAL_MS,
        commitIntervalMs: config.KAFKA_COMMIT_INTERVAL_MS,
      },
    });
    undo.push(() => bus.close());

    const dispatcher = createDispatcher({
      timeoutMs: config.WEBHOOK_TIMEOUT_MS,
      allowPrivateTargets: config.WEBHOOK_ALLOW_PRIVATE_TARGETS,
      undiciDispatch: config.UNDICI_DISPATCH,
    });
    undo.push(() => dispatcher.close());
    const webhooks = new WebhookRepository(prisma, keyring);
    const deliveries = new DeliveryRepository(prisma, db.sql);
    const scheduler = new DeliveryScheduler({
      deliveries,
      executor: new AttemptExecutor({
        deliveries,
        dispatcher,
        keyring,
        retryDelaysMs: config.WEBHOOK_RETRY_DELAYS_MS,
        leaseMs: config.WEBHOOK_TIMEOUT_MS + LEASE_MARGIN_MS,
        freshClaims: config.WEBHOOK_LEASE_ON_CREATE,
        keptSecrets: config.WEBHOOK_KEPT_SECRETS,
        logger,
      }),
      limiter: createConcurrencyLimiter({
        maxInFlight: config.WEBHOOK_MAX_IN_FLIGHT,
        maxPerKey: MAX_IN_FLIGHT_PER_WEBHOOK,
        maxPerGroup: config.WEBHOOK_MAX_IN_FLIGHT_PER_BUSINESS,
      }),
      // Claimed-but-unrecorded attempts at most (in flight plus waiting for a slot): twice the slots,
      // so the next attempts are ready when a slot frees, and the rest waits in the database.
      maxPending: config.WEBHOOK_MAX_IN_FLIGHT * 2,
      maxPendingPerBusiness: config.WEBHOOK_MAX_IN_FLIGHT_PER_BUSINESS * 2,
      leaseOnCreate: config.WEBHOOK_LEASE_ON_CREATE,
      logger,
    });
    undo.push(() => scheduler.drain());
    undo.push(deliveryLoad.add(async () => scheduler.load()));
    undo.push(
      deliveryBacklog.add(async () => ({
        retriesDue: await deliveries.countRetriesDue(new Date()),
      })),
    );
    const retries = new RetryScheduler({
      deliveries,
      scheduler,
      intervalMs: config.WEBHOOK_RETRY_INTERVAL_MS,
      batchSize: config.WEBHOOK_RETRY_BATCH_SIZE,
      maxPending: config.WEBHOOK_MAX_IN_FLIGHT * 2,
      logger,
    });

    const subscription = await bus.subscribe({
      topic: RECORDS_TOPIC,
      groupId: options.consumerGroupId ?? CONSUMER_GROUP,
      batchHandler: createRecordsConsumer({ deliveries, scheduler, logger, lookupFirst: config.WEBHOOK_CONSUMER_LOOKUP_FIRST }),
      // The API answers while the consumer joins its group (seconds: the broker's rebalance delay);
      // no event is missed meanwhile, consumption starts at the group's committed offsets.
      waitForJoin: false,
    });
    undo.push(() => subscription.stop());
    retries.start();
    undo.push(() => retries.stop());
    const poller = new FirstAttemptPoller({ scheduler, intervalMs: FIRST_ATTEMPT_POLL_MS, logger });
    poller.start();
    undo.push(() => poller.stop());
    const reencryption = new SecretReencryption(prisma, keyring, logger);
    const reencryptionJob = startPeriodicJob({
      name: "webhook-secret-reencryption",
      intervalMs: config.WEBHOOK_SECRET_REENCRYPT_INTERVAL_MS,
      batchSize: REENCRYPT_BATCH_SIZE,
      // A whole table per run (up to 100,000 webhooks), so a rotation completes at the next start.
      maxBatchesPerRun: 1_000,
      batch: (limit) => reencryption.batch(limit),
      logger,
    });
    undo.push(() => reencryptionJob.stop());
    const retention = startRetention({
      rules: [...deliveryRetentionRules(prisma, config.DELIVERY_RETENTION_MS), auditRetentionRule({ db: prisma, schema: "webhooks", retentionDays: config.AUDIT_RETENTION_DAYS })],
      intervalMs: config.RETENTION_INTERVAL_MS,
      batchSize: config.RETENTION_BATCH_SIZE,
      logger,
    });
    undo.push(() => retention.stop());

    mountChecksInOneLayer(config.LEAN_REQUEST_CONTEXT);
    const app = createApp({
      logger,
      internalTokenSecret,
      readiness: [
        { name: "database", check: () => db.ping() },
        {
          // Reachable, and our consumer has not given up (it may still be joining its group).
          name: "bus",
          check: async () => {
            const failure = subscription.failure?.();
            if (failure) throw failure;
            await bus.ping();
          },
        },
      ],
      webhooks,
      deliveries,
      scheduler,
      manualRetryWaitMs: config.WEBHOOK_TIMEOUT_MS + 1_000,
      now: options.now,
      capabilities: {
        webhookTimeoutMs: config.WEBHOOK_TIMEOUT_MS,
        webhookRetryDelaysMs: config.WEBHOOK_RETRY_DELAYS_MS,
        webhookRetryIntervalMs: config.WEBHOOK_RETRY_INTERVAL_MS,
        webhookRetryBatchSize: config.WEBHOOK_RETRY_BATCH_SIZE,
      },
      appDevices: serviceAppDevicesOf(config),
    });
    const server = undo.listening(await listen(app, config.PORT, config.HOST), config.SHUTDOWN_DRAIN_MS);
    logger.info({ url: server.url, database: db.kind, bus: bus.kind, secretKeyIds: keyring.keyIds }, "webhook-delivery listening");

    return {
      url: server.url,
      port: server.port,
      prisma,
      retries,
      scheduler,
      deliveries,
      secretReencryption: { ...reencryptionJob, counts: () => reencryption.counts() },
      retention,
    };
  });
}
