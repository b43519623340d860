// Shared test plumbing: start the service as production does (start(loadConfig(env))) with timings
// shortened through the WEBHOOK_* variables, call it with a signed internal token, receive its
// deliveries on loopback, and publish events on the bus it consumes.
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { Client } from "pg";
import request from "supertest";
import { allPermissions, RECORDS_TOPIC, uuidv7, type EventEnvelope, type Principal } from "@crm/contracts";
import { openEventBus, type EventBus } from "@crm/event-bus";
import { createLogger } from "@crm/logger";
import { signInternalToken } from "@crm/service-kit";
import { createTestDatabase, testInfra } from "@crm/testing";
import { loadConfig, start, type StartOptions, type WebhookDeliveryService } from "../../src";

export const INTERNAL_SECRET = "internal-token-secret-for-tests-0123456789";
/** Set TEST_LOG_LEVEL=debug to see the service's logs while debugging a test. */
export const silent = createLogger({ service: "test", level: process.env.TEST_LOG_LEVEL ?? "silent" });

export type DatabaseMode = "pglite" | "postgres";

/** The modes this machine can run: PGlite always, PostgreSQL when the test setup found one. */
export const databaseModes: DatabaseMode[] = testInfra.databaseUrl ? ["pglite", "postgres"] : ["pglite"];
/** Where tests that are about delivery, not storage, run: PostgreSQL when present (faster). */
export const preferredMode: DatabaseMode = testInfra.databaseUrl ? "postgres" : "pglite";

/** A database for one test file: a temp DATA_DIR for PGlite, or a fresh PostgreSQL database. */
export interface TestDatabase {
  env: Record<string, string>;
  drop(): Promise<void>;
}

export async function testDatabase(mode: DatabaseMode): Promise<TestDatabase> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), "webhook-delivery-test-"));
  const cleanDir = () => rmSync(dataDir, { recursive: true, force: true });
  if (mode === "pglite") return { env: { DATA_DIR: dataDir }, drop: async () => cleanDir() };
  const db = await createTestDatabase("webhooks_test");
  return {
    env: { DATA_DIR: dataDir, DATABASE_URL: db.url, MIGRATE_ON_START: "true" },
    drop: async () => {
      await waitForDisconnects(db.url);
      await db.drop();
      cleanDir();
    },
  };
}

/**
 * pg's pool.end() resolves before its sockets have closed; dropping the database at that moment
 * (WITH FORCE) would terminate those backends and surface as an unhandled error in a later test.
 */
async function waitForDisconnects(url: string): Promise<void> {
  const name = new URL(url).pathname.slice(1);
  const admin = new Client({ connectionString: testInfra.databaseUrl });
  await admin.connect();
  try {
    for (let i = 0; i < 100; i++) {
      const { rows } = await admin.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1", [name]);
      if (rows[0]?.n === 0) return;
      await sleep(20);
    }
  } finally {
    await admin.end();
  }
}

export async function startService(db: TestDatabase, env: Record<string, string> = {}, options: StartOptions = {}): Promise<WebhookDeliveryService> {
  const config = loadConfig({
    PORT: "0",
    HOST: "127.0.0.1",
    INTERNAL_TOKEN_SECRET: INTERNAL_SECRET,
    LOG_LEVEL: "silent",
    WEBHOOK_ALLOW_PRIVATE_TARGETS: "true",
    WEBHOOK_TIMEOUT_MS: "1000",
    ...db.env,
    ...env,
  });
  return start(config, { logger: silent, ...options });
}

export function principal(businessId: string, permissions: readonly string[] = allPermissions): Principal {
  return { businessId, authType: "jwt", userId: uuidv7(), apiKeyId: null, sessionId: null, jti: null, permissions: [...permissions] };
}

/** An HTTP client that calls the service as the gateway does, for one principal. */
export function api(service: { url: string }, who: Principal) {
  const token = () => signInternalToken({ principal: who }, INTERNAL_SECRET);
  const agent = request(service.url);
  return {
    get: (p: string) => agent.get(p).set("x-internal-token", token()),
    post: (p: string, body?: object) => {
      const req = agent.post(p).set("x-internal-token", token());
      return body === undefined ? req : req.send(body);
    },
    put: (p: string, body: object) => agent.put(p).set("x-internal-token", token()).send(body),
    delete: (p: string) => agent.delete(p).set("x-internal-token", token()),
  };
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

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
