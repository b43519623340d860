// Builds the identity app in-process on PGlite (temp DATA_DIR) or on a fresh PostgreSQL database,
// with an in-memory key-value store (or the one a test brings: Redis, a store whose writes fail) and
// a logger whose lines the tests can search for secrets.
import { createHash } from "node:crypto";
import type supertest from "supertest";
import { AccessTokenCodec, AuthCache } from "@crm/auth-cache";
import { rolePermissions, type Principal } from "@crm/contracts";
import { MemoryKvStore, type KvStore } from "@crm/kv-store";
import { createLogger } from "@crm/logger";
import { INTERNAL_TOKEN_SECRET, internalCaller, openTestDatabase, sharedFixture, type DatabaseMode, type HttpMethod } from "@crm/testing";
import { createApp, loadConfig } from "../src";
import { PrismaClient } from "../src/persistence/prisma";
import { MIGRATIONS_DIR } from "../src/start";

export type Mode = DatabaseMode;

export interface Harness {
  app: ReturnType<typeof createApp>;
  prisma: PrismaClient;
  /** The store the app writes to (closed with the harness). */
  kv: KvStore;
  cache: AuthCache;
  codec: AccessTokenCodec;
  logs: string[];
  internalSecret: string;
  /** A public auth route as the gateway forwards it: internal token without principal, X-Forwarded-*. */
  pub(path: string, opts?: { address?: string; proto?: string; cookie?: string }): supertest.Test;
  /** A request carrying the given principal. */
  as(principal: Principal, method: HttpMethod, path: string): supertest.Test;
  /** The principal the gateway would build for this access token (throws when it would refuse it). */
  principalOf(accessToken: string): Promise<Principal>;
  close(): Promise<void>;
}

export const JWT_SECRET = "test-jwt-secret-that-is-long-enough-0123456789";

export interface HarnessOptions {
  /** The key-value store the app uses; an in-memory one when omitted. */
  kv?: KvStore;
  /** Epoch ms for the app and the in-memory store: a test moves it instead of sleeping. */
  clock?: () => number;
  /** PostgreSQL mode: the database is reached through this `host:port` (a FaultProxy). */
  databaseVia?: string;
}

export async function openHarness(mode: Mode, env: Record<string, string> = {}, options: HarnessOptions = {}): Promise<Harness> {
  const opened = await openTestDatabase(mode, { prefix: "identity_test", schema: "identity", migrationsDir: MIGRATIONS_DIR, databaseVia: options.databaseVia });
  const db = opened.database;
  const config = loadConfig({ PASSWORD_HASH_COST: "10", ...env });
  const prisma = new PrismaClient({ adapter: db.adapter });
  const kv = options.kv ?? new MemoryKvStore(options.clock);
  const logs: string[] = [];
  const logger = createLogger({ service: "identity", level: "debug", destination: { write: (line: string) => void logs.push(line) } });
  const app = createApp({ config, logger, prisma, kv, jwtSecret: JWT_SECRET, internalTokenSecret: INTERNAL_TOKEN_SECRET, readiness: [], clock: options.clock });
  const cache = new AuthCache(kv);
  const codec = new AccessTokenCodec(JWT_SECRET);

  return {
    app,
    prisma,
    kv,
    cache,
    codec,
    logs,
    internalSecret: INTERNAL_TOKEN_SECRET,
    pub: (p, opts = {}) => {
      const test = internalCaller(app, undefined)
        .post(p)
        .set("x-forwarded-for", opts.address ?? "127.0.0.1")
        .set("x-forwarded-proto", opts.proto ?? "http");
      return opts.cookie ? test.set("cookie", opts.cookie) : test;
    },
    as: (principal, method, p) => internalCaller(app, principal)[method](p),
    principalOf: async (accessToken) => {
      const claims = codec.verify(accessToken);
      if (!claims) throw new Error("401010");
      const { entry, user } = await cache.readAccessTokenAndUser(claims.jti, claims.sub);
      if (entry !== claims.sid) throw new Error("401011");
      const row = await prisma.user.findUnique({ where: { id: claims.sub } });
      if (!row?.businessId || user?.deleted) throw new Error("401011");
      return {
        businessId: row.businessId,
        authType: "jwt",
        userId: row.id,
        apiKeyId: null,
        sessionId: claims.sid,
        jti: claims.jti,
        permissions: [...rolePermissions[row.role]],
      };
    },
    close: async () => {
      await prisma.$disconnect();
      await kv.close();
      await opened.close();
    },
  };
}

/** Values of the Set-Cookie header for `refreshToken`. */
export function refreshCookie(res: { headers: Record<string, unknown> }): string | undefined {
  const raw = res.headers["set-cookie"];
  const list = Array.isArray(raw) ? (raw as string[]) : typeof raw === "string" ? [raw] : [];
  return list.find((c) => c.startsWith("refreshToken="));
}

export function cookieValue(setCookie: string | undefined): string {
  return decodeURIComponent(setCookie?.split(";")[0]?.slice("refreshToken=".length) ?? "");
}

let counter = 0;
export function uniqueEmail(tag = "user"): string {
  counter += 1;
  return `${tag}.${process.pid}.${Date.now()}.${counter}@Example.com`;
}

export const PASSWORD = "correct horse battery";

/** Settings the behavioural tests share: a low sign-in lock threshold with short locks. */
export const SUITE_ENV = { SIGN_IN_MAX_FAILURES: "3", SIGN_IN_LOCK_BASE_MS: "1000", SIGN_IN_LOCK_MAX_MS: "2000" };

export const sha256 = (s: string) => createHash("sha256").update(s).digest("hex");

/** The harness all tests of a file share, with SUITE_ENV: opened in beforeAll, closed in afterAll. */
export function sharedHarness(mode: Mode, options: HarnessOptions = {}): Harness {
  return sharedFixture(`identity harness on ${mode}`, () => openHarness(mode, SUITE_ENV, options));
}

/** Sign-up and user creation through the API, on the harness `harness()` returns when called. */
export function accountHelpers(harness: () => Harness) {
  async function signUp(email = uniqueEmail("owner")) {
    const h = harness();
    const res = await h.pub("/api/v1/auth/sign-up").send({ businessName: "Acme", email, password: PASSWORD, firstName: "Ada" });
    expect(res.status).toBe(201);
    const principal = await h.principalOf(res.body.data.accessToken);
    return { res, email, principal, accessToken: res.body.data.accessToken as string, refresh: cookieValue(refreshCookie(res)) };
  }

  async function addUser(owner: Principal, role: string) {
    const h = harness();
    const email = uniqueEmail(role.toLowerCase());
    const created = await h.as(owner, "post", "/api/v1/user").send({ email, password: PASSWORD, role });
    expect(created.status).toBe(201);
    const signIn = await h.pub("/api/v1/auth/sign-in").send({ email, password: PASSWORD });
    expect(signIn.status).toBe(200);
    return { user: created.body.data, principal: await h.principalOf(signIn.body.data.accessToken), accessToken: signIn.body.data.accessToken as string };
  }

  return { signUp, addUser };
}
