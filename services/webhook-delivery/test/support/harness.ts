// Shared test plumbing: start the service as production does (start(loadConfig(env))) with timings
// shortened through the WEBHOOK_* variables, call it with a signed internal token, receive its
// deliveries on loopback, and publish events on the bus it consumes.
import { RECORDS_TOPIC, uuidv7, type EventEnvelope, type Principal } from "@crm/contracts";
import { openEventBus, type EventBus } from "@crm/event-bus";
import { createLogger } from "@crm/logger";
import {
  INTERNAL_TOKEN_SECRET,
  internalCaller,
  principalFor,
  startReceiver,
  SuiteResources,
  testDatabase as kitTestDatabase,
  type DatabaseMode,
  type Receiver,
  type TestDatabase,
  waitFor,
} from "@crm/testing";
import { loadConfig, start, type StartOptions, type WebhookDeliveryService } from "../../src";
import { MIGRATIONS_DIR } from "./migrations";

/** Set TEST_LOG_LEVEL=debug to see the service's logs while debugging a test. */
export const silent = createLogger({ service: "test", level: process.env.TEST_LOG_LEVEL ?? "silent" });

export { databaseModes, preferredMode, type DatabaseMode, type TestDatabase } from "@crm/testing";

/** A database for one test file, schema "webhooks" migrated: a temp DATA_DIR for PGlite, or a new PostgreSQL database. */
export function testDatabase(mode: DatabaseMode): Promise<TestDatabase> {
  return kitTestDatabase(mode, "webhooks_test", { schema: "webhooks", migrationsDir: MIGRATIONS_DIR });
}

export async function startService(db: TestDatabase, env: Record<string, string> = {}, options: StartOptions = {}): Promise<WebhookDeliveryService> {
  const config = loadConfig({
    PORT: "0",
    HOST: "127.0.0.1",
    INTERNAL_TOKEN_SECRET,
    LOG_LEVEL: "silent",
    WEBHOOK_ALLOW_PRIVATE_TARGETS: "true",
    WEBHOOK_TIMEOUT_MS: "1000",
    ...db.env,
    ...env,
  });
  return start(config, { logger: silent, ...options });
}

/** What a test file of this service works with, set up in beforeAll and closed in afterAll. */
export interface DeliverySetup {
  db: TestDatabase;
  /** The instance started in beforeAll (unless `service: false`). */
  service: WebhookDeliveryService;
  /** A loopback receiver (unless `receiver: false`). */
  receiver: Receiver;
  /** Starts another instance on the same database; it stops after the file's tests. */
  start(env?: Record<string, string>, options?: StartOptions): Promise<WebhookDeliveryService>;
}

/**
 * Registers the set-up most test files share: a database in `mode`, a receiver answering as
 * `receiver` says (200 "ok" unless told), and one instance started with the `service` settings.
 */
export function setUpDelivery(
  mode: DatabaseMode,
  options: { service?: Record<string, string> | false; receiver?: Receiver["behaviour"] | false; timeoutMs?: number } = {},
): DeliverySetup {
  const setup = {} as DeliverySetup;
  const resources = new SuiteResources(async () => {
    setup.db = resources.track(await testDatabase(mode), (db) => db.drop());
    if (options.receiver !== false) setup.receiver = resources.track(await startReceiver(options.receiver), (r) => r.close());
    if (options.service !== false) setup.service = await setup.start(options.service);
  }, options.timeoutMs);
  setup.start = async (env = {}, startOptions = {}) => resources.track(await startService(setup.db, env, startOptions), (s) => s.stop());
  return setup;
}

export function principal(businessId: string, permissions?: readonly string[]): Principal {
  return principalFor(businessId, permissions);
}

/** An HTTP client that calls the service as the gateway does, for one principal. */
export function api(service: { url: string }, who: Principal) {
  return internalCaller(service.url, who);
}

export { startReceiver, type Behaviour, type Receiver, type ReceivedRequest } from "@crm/testing";

/** The in-process bus of this test process (the one the service consumes when KAFKA_BROKERS is unset). */
export function inProcessBus(): EventBus {
  return openEventBus({ brokers: undefined, clientId: "test-producer", logger: silent });
}

export function recordEvent(businessId: string, type: string, data: Record<string, unknown> = {}): EventEnvelope {
  return { id: uuidv7(), type, businessId, occurredAt: new Date().toISOString(), version: 1, data };
}

export async function publish(bus: EventBus, events: EventEnvelope[], topic = RECORDS_TOPIC): Promise<void> {
  await bus.publish(
    topic,
    events.map((value) => ({ key: value.businessId, value })),
  );
}

/**
 * "Nothing more is sent", shown by a signal instead of wall time: a retry cycle of each instance runs
 * now (it claims whatever is due), then every attempt the instances have claimed has finished.
 */
export async function settled(...services: WebhookDeliveryService[]): Promise<void> {
  for (const service of services) await service.retries.runOnce();
  await waitFor(() => services.every((service) => service.scheduler.pending === 0), 10_000, 10);
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
