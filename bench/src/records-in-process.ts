// crm-records' app dependencies on a scratch database of the local PostgreSQL, for the benchmarks
// that serve its app in their own process (records-http.bench.ts, hop-floor.bench.ts), and
// autocannon run as a child process, so its CPU is never counted as the server's.
import { spawn } from "node:child_process";
import os from "node:os";
import { permission, type Principal } from "@crm/contracts";
import { signInternalToken } from "@crm/service-kit";
import { createTestDatabase, startInfra, testInfra } from "@crm/testing";
import { openDatabase, type SqlRunner } from "../../packages/database/src";
import { createLogger } from "../../packages/logger/src";
import type { AppDeps } from "../../services/crm-records/src/app";
import { createPrismaClient, type PrismaClient } from "../../services/crm-records/src/persistence/prisma";
import { MIGRATIONS_DIR } from "../../services/crm-records/src/start";

export interface RecordsInProcess {
  /** What createApp needs, at LOG_LEVEL=warn as the benchmarks run the services. */
  deps: AppDeps;
  prisma: PrismaClient;
  sql: SqlRunner;
  secret: string;
  /** The headers the gateway would send for a JWT caller of `businessId` with these client permissions. */
  headersFor(businessId: string, actions: ReadonlyArray<"create" | "read">): Record<string, string>;
  close(): Promise<void>;
}

export async function openRecordsInProcess(databaseName: string): Promise<RecordsInProcess> {
  const infra = await startInfra(() => undefined);
  Object.assign(testInfra, { databaseUrl: infra.databaseUrl });
  const database = await createTestDatabase(databaseName);
  const db = await openDatabase({ url: database.url, dataDir: os.tmpdir(), schema: "records", migrationsDir: MIGRATIONS_DIR, migrate: true });
  const prisma = createPrismaClient(db.adapter);
  const secret = "s".repeat(40);
  const logger = createLogger({ service: "crm-records", level: "warn" });
  return {
    deps: { logger, prisma, internalTokenSecret: secret, sql: db.sql, parallelQueries: true },
    prisma,
    sql: db.sql,
    secret,
    headersFor: (businessId, actions) => {
      const principal: Principal = {
        businessId,
        authType: "jwt",
        userId: businessId,
        apiKeyId: null,
        sessionId: null,
        jti: null,
        permissions: actions.map((action) => permission("clients", action)),
      };
      return { "content-type": "application/json", "x-internal-token": signInternalToken({ principal, requestId: "bench" }, secret, 86_400) };
    },
    close: async () => {
      await prisma.$disconnect();
      await db.close();
      await database.drop();
      await infra.stop();
    },
  };
}

export interface AutocannonSummary {
  requests: { total: number; average: number };
  non2xx: number;
  errors: number;
}

/** One autocannon run (its command-line `args`, without `-j`) in a child process. */
export function autocannonChild(args: readonly string[]): Promise<AutocannonSummary> {
  const child = spawn(`${__dirname}/../node_modules/.bin/autocannon`, [...args, "-j"], { stdio: ["ignore", "pipe", "ignore"] });
  let out = "";
  child.stdout.on("data", (chunk) => (out += chunk));
  return new Promise((resolve) => child.on("exit", () => resolve(JSON.parse(out) as AutocannonSummary)));
}
