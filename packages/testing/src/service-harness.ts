// The plumbing every service's integration tests share: a database per mode (PGlite in a temp
// DATA_DIR, or a fresh PostgreSQL database on the test server), principals, and an HTTP caller that
// carries a signed internal token as the gateway's forwarded requests do.
import { cpSync, mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import request from "supertest";
import { allPermissions, uuidv7, type Principal } from "@crm/contracts";
import { openDatabase, type Database } from "@crm/database";
import { signInternalToken } from "@crm/service-kit";
import { createTestDatabase, describePostgres, testInfra, waitForDisconnects } from "./databases";
import { pgliteTemplate, postgresTemplate, type SchemaSource } from "./migrated-templates";

export type DatabaseMode = "pglite" | "postgres";

/** The modes this machine can run: PGlite always, PostgreSQL when the test setup found one. */
export const databaseModes: DatabaseMode[] = testInfra.databaseUrl ? ["pglite", "postgres"] : ["pglite"];
/** Where tests that are about something other than storage run: PostgreSQL when present (faster). */
export const preferredMode: DatabaseMode = testInfra.databaseUrl ? "postgres" : "pglite";

/**
 * `body` once per database mode: in a plain `describe` on PGlite, and in `describePostgres` (skipped
 * loudly where no PostgreSQL was found) on PostgreSQL. `title` names the mode with %s.
 */
export function describeEachMode(title: string, body: (mode: DatabaseMode) => void): void {
  describe(title.replace("%s", "PGlite"), () => body("pglite"));
  describePostgres(title.replace("%s", "PostgreSQL"), () => body("postgres"));
}

/** A database for one test file: where it lives, the environment a service reads it from, and how to remove it. */
export interface TestDatabase {
  mode: DatabaseMode;
  /** A temp directory (PGlite's data, or a service's DATA_DIR beside PostgreSQL). */
  dataDir: string;
  /** The PostgreSQL database, in postgres mode. */
  url?: string;
  /** DATA_DIR, and in postgres mode DATABASE_URL with MIGRATE_ON_START, as a service's config reads them. */
  env: Record<string, string>;
  drop(): Promise<void>;
}

/**
 * A new test database; with `migrated`, a copy of that schema already migrated (made once per jest
 * run: ./migrated-templates.ts), whose service's own migration run then finds nothing to apply.
 */
export async function testDatabase(mode: DatabaseMode, prefix = "crm_test", migrated?: SchemaSource): Promise<TestDatabase> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), `${prefix}-`));
  const cleanDir = () => rmSync(dataDir, { recursive: true, force: true });
  if (mode === "pglite") {
    const template = migrated && (await pgliteTemplate(migrated));
    if (template) cpSync(template, path.join(dataDir, "pglite"), { recursive: true });
    return { mode, dataDir, env: { DATA_DIR: dataDir }, drop: async () => cleanDir() };
  }
  const created = await createTestDatabase(prefix, migrated && (await postgresTemplate(migrated)));
  return {
    mode,
    dataDir,
    url: created.url,
    env: { DATA_DIR: dataDir, DATABASE_URL: created.url, MIGRATE_ON_START: "true" },
    drop: async () => {
      await waitForDisconnects(created.url);
      await created.drop();
      cleanDir();
    },
  };
}

/** A service's schema opened (and migrated) on a test database; `close` closes it and drops the database. */
export async function openTestDatabase(
  mode: DatabaseMode,
  options: { prefix: string; schema: string; migrationsDir: string; poolSize?: number /** PostgreSQL reached through this `host:port` (a FaultProxy). */; databaseVia?: string },
): Promise<{ database: Database; testDatabase: TestDatabase; close(): Promise<void> }> {
  const { schema, migrationsDir, poolSize } = options;
  const created = await testDatabase(mode, options.prefix, { schema, migrationsDir });
  const database = created.url
    ? await openDatabase({ url: via(created.url, options.databaseVia), dataDir: created.dataDir, schema, migrationsDir, migrate: true, poolSize })
    : await openDatabase({ dataDir: created.dataDir, schema, migrationsDir });
  return {
    database,
    testDatabase: created,
    close: async () => {
      await database.close();
      await created.drop();
    },
  };
}

/** `url` with its host and port replaced by `address` (`host:port`), when one is given. */
function via(url: string, address: string | undefined): string {
  if (address === undefined) return url;
  const proxied = new URL(url);
  proxied.host = address;
  return proxied.toString();
}

/** The secret the tests' services verify internal tokens with. */
export const INTERNAL_TOKEN_SECRET = "test-internal-token-secret-0123456789abcdef";

/** A principal of `businessId` holding `permissions` (all of them unless told), as the gateway builds it. */
export function principalFor(businessId: string, permissions: readonly string[] = allPermissions, authType: Principal["authType"] = "jwt"): Principal {
  return authType === "apiKey"
    ? { businessId, authType, userId: null, apiKeyId: uuidv7(), sessionId: null, jti: null, permissions: [...permissions] }
    : { businessId, authType, userId: uuidv7(), apiKeyId: null, sessionId: null, jti: null, permissions: [...permissions] };
}

export type HttpMethod = "get" | "post" | "put" | "patch" | "delete";

/** Requests to a service as the gateway forwards them: each carries a freshly signed internal token. */
export interface InternalCaller {
  get(url: string): request.Test;
  post(url: string, body?: object): request.Test;
  patch(url: string, body?: object): request.Test;
  put(url: string, body?: object): request.Test;
  delete(url: string): request.Test;
}

/**
 * A caller of `target` (an app or a URL) for `principal`; without one the token names no principal,
 * as on the public auth routes. `prefix` is put before paths that do not start with it already.
 */
export function internalCaller(target: Parameters<typeof request>[0], principal: Principal | undefined, options: { secret?: string; prefix?: string } = {}): InternalCaller {
  const { secret = INTERNAL_TOKEN_SECRET, prefix = "" } = options;
  const agent = request(target);
  const url = (p: string) => (p.startsWith(prefix) ? p : `${prefix}${p}`);
  const send = (method: HttpMethod, p: string, body?: object) => {
    const req = agent[method](url(p)).set("x-internal-token", signInternalToken(principal ? { principal } : {}, secret));
    return body === undefined ? req : req.send(body);
  };
  return {
    get: (p) => send("get", p),
    post: (p, body) => send("post", p, body),
    patch: (p, body) => send("patch", p, body),
    put: (p, body) => send("put", p, body),
    delete: (p) => send("delete", p),
  };
}
