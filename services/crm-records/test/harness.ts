// Shared set-up of the integration tests: the app on a fresh database (PGlite in a temp DATA_DIR,
// or a new PostgreSQL database), and callers that carry a signed internal token for a principal.
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import request from "supertest";
import type { Express } from "express";
import { permission, recordResources, uuidv7, type Permission, type Principal, type RecordEntity } from "@crm/contracts";
import { openDatabase, type Database } from "@crm/database";
import { createLogger } from "@crm/logger";
import { signInternalToken } from "@crm/service-kit";
import { createTestDatabase } from "@crm/testing";
import { createApp } from "../src/app";
import { loadConfig } from "../src/config";
import { createPrismaClient, type PrismaClient, type Tx } from "../src/persistence/prisma";
import { adjustRecordCount } from "../src/persistence/record-count";
import { MIGRATIONS_DIR } from "../src/start";

export type Mode = "pglite" | "postgres";

export const SECRET = "test-internal-token-secret-0123456789abcdef";
export const logger = createLogger({ service: "crm-records-test", level: "silent" });

export const allRecordPermissions: Permission[] = recordResources.flatMap((r) => (["read", "create", "update", "delete"] as const).map((a) => permission(r, a)));

export function principalFor(businessId: string, permissions: readonly string[] = allRecordPermissions): Principal {
  return { businessId, authType: "apiKey", userId: null, apiKeyId: uuidv7(), sessionId: null, jti: null, permissions: [...permissions] };
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

export async function openHarness(mode: Mode, options: { onCommitted?: () => void; config?: NodeJS.ProcessEnv } = {}): Promise<Harness> {
  let dataDir: string | undefined;
  let drop: (() => Promise<void>) | undefined;
  let db: Database;
  if (mode === "pglite") {
    dataDir = mkdtempSync(path.join(os.tmpdir(), "crm-records-test-"));
    db = await openDatabase({ dataDir, schema: "records", migrationsDir: MIGRATIONS_DIR });
  } else {
    const created = await createTestDatabase("crm_records");
    drop = created.drop;
    db = await openDatabase({ url: created.url, dataDir: os.tmpdir(), schema: "records", migrationsDir: MIGRATIONS_DIR, migrate: true, poolSize: 25 });
  }
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
  });
  return {
    mode,
    app,
    prisma,
    db,
    caller: ({ businessId = uuidv7(), permissions } = {}) => {
      const token = () => signInternalToken({ principal: principalFor(businessId, permissions) }, SECRET);
      const prefix = (url: string) => (url.startsWith("/api/") ? url : `/api/v1${url}`);
      return {
        businessId,
        get: (url) => request(app).get(prefix(url)).set("x-internal-token", token()),
        post: (url, body) =>
          request(app)
            .post(prefix(url))
            .set("x-internal-token", token())
            .send(body ?? {}),
        patch: (url, body) =>
          request(app)
            .patch(prefix(url))
            .set("x-internal-token", token())
            .send(body ?? {}),
        put: (url, body) =>
          request(app)
            .put(prefix(url))
            .set("x-internal-token", token())
            .send(body ?? {}),
        delete: (url) => request(app).delete(prefix(url)).set("x-internal-token", token()),
      };
    },
    close: async () => {
      await prisma.$disconnect();
      await db.close();
      if (drop) await drop();
      if (dataDir) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Creates a client for `caller` and returns its id. */
/** After seeding rows straight into a table (createMany): the count every create keeps (see record-count.ts). */
export async function countSeeded(h: Harness, businessId: string, entity: RecordEntity, added: number): Promise<void> {
  await adjustRecordCount(h.prisma as unknown as Tx, businessId, entity, added);
}

export async function createClient(caller: Caller, body: object = {}): Promise<string> {
  const res = await caller.post("/client", { firstName: "Ada", lastName: "Lovelace", ...body });
  if (res.status !== 201) throw new Error(`client create failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.data.id as string;
}
