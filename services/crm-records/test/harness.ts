// Shared set-up of the integration tests: the app on a fresh database (PGlite in a temp DATA_DIR,
// or a new PostgreSQL database), and callers that carry a signed internal token for a principal.
import type { FeedWaiters } from "../src/application/feed-waiters";
import type { Express } from "express";
import type request from "supertest";
import { permission, recordResources, uuidv7, type Permission, type Principal, type RecordEntity } from "@crm/contracts";
import type { Database } from "@crm/database";
import { createLogger } from "@crm/logger";
import { INTERNAL_TOKEN_SECRET, internalCaller, openTestDatabase, sharedFixture, principalFor as kitPrincipal, type DatabaseMode } from "@crm/testing";
import { createApp } from "../src/app";
import { loadConfig, recordDevicesOf } from "../src/config";
import { createPrismaClient, type PrismaClient, type Tx } from "../src/persistence/prisma";
import { adjustRecordCount } from "../src/persistence/record-count";
import { MIGRATIONS_DIR } from "../src/start";

export type Mode = DatabaseMode;

export const SECRET = INTERNAL_TOKEN_SECRET;
export const logger = createLogger({ service: "crm-records-test", level: "silent" });

export const allRecordPermissions: Permission[] = recordResources.flatMap((r) => (["read", "create", "update", "delete"] as const).map((a) => permission(r, a)));

/** An API key's principal: the callers of records are keys unless a test says otherwise. */
export function principalFor(businessId: string, permissions: readonly string[] = allRecordPermissions): Principal {
  return kitPrincipal(businessId, permissions, "apiKey");
}

export interface Caller {
  businessId: string;
  get(url: string): request.Test;
  post(url: string, body?: object): request.Test;
  patch(url: string, body?: object): request.Test;
  put(url: string, body?: object): request.Test;
  delete(url: string): request.Test;
}

export interface Harness {
  mode: Mode;
  app: Express;
  prisma: PrismaClient;
  db: Database;
  /** A caller for a new business (or the given one) with all record permissions unless told otherwise. */
  caller(options?: { businessId?: string; permissions?: readonly string[] }): Caller;
  close(): Promise<void>;
}

export async function openHarness(mode: Mode, options: { onCommitted?: () => void; config?: NodeJS.ProcessEnv; feedWaiters?: FeedWaiters } = {}): Promise<Harness> {
  const opened = await openTestDatabase(mode, { prefix: "crm_records", schema: "records", migrationsDir: MIGRATIONS_DIR, poolSize: 25 });
  const db = opened.database;
  const prisma = createPrismaClient(db.adapter);
  // Settings the app takes from configuration, parsed as the service parses them.
  const config = loadConfig({ INTERNAL_TOKEN_SECRET: SECRET, ...options.config });
  const app = createApp({
    logger,
    prisma,
    internalTokenSecret: SECRET,
    onCommitted: options.onCommitted,
    sql: db.sql,
    parallelQueries: mode === "postgres",
    includeMaxPerRelation: config.INCLUDE_MAX_PER_RELATION,
    feedWaiters: options.feedWaiters,
    devices: recordDevicesOf(config),
  });
  return {
    mode,
    app,
    prisma,
    db,
    caller: ({ businessId = uuidv7(), permissions } = {}) => {
      const call = internalCaller(app, principalFor(businessId, permissions), { prefix: "/api/v1" });
      // Writes always carry a JSON body here, {} when the test gives none.
      return {
        businessId,
        get: call.get,
        post: (url, body) => call.post(url, body ?? {}),
        patch: (url, body) => call.patch(url, body ?? {}),
        put: (url, body) => call.put(url, body ?? {}),
        delete: call.delete,
      };
    },
    close: async () => {
      await prisma.$disconnect();
      await opened.close();
    },
  };
}

/** The harness all tests of a file (or describe block) share: opened in beforeAll, closed in afterAll. */
export function sharedHarness(mode: Mode, options: Parameters<typeof openHarness>[1] = {}, timeoutMs?: number): Harness {
  return sharedFixture(`crm-records harness on ${mode}`, () => openHarness(mode, options), timeoutMs);
}

/** After seeding rows straight into a table (createMany): the count every create keeps (see record-count.ts). */
export async function countSeeded(h: Harness, businessId: string, entity: RecordEntity, added: number): Promise<void> {
  await adjustRecordCount(h.prisma as unknown as Tx, businessId, entity, added);
}

/** Creates a client for `caller` and returns its id. */
export async function createClient(caller: Caller, body: object = {}): Promise<string> {
  const res = await caller.post("/client", { firstName: "Ada", lastName: "Lovelace", ...body });
  if (res.status !== 201) throw new Error(`client create failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.data.id as string;
}
