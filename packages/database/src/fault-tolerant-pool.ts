// The one place a service's PostgreSQL connections meet connection faults: a server restart or
// failover, a backend terminated by an operator, a network blip. Every statement, Prisma's (through
// its pg adapter) and raw SQL's alike, goes through this pool. A read that fails because its
// connection was lost is sent once more on a fresh connection; anything that still fails, or a write
// (which may or may not have committed), surfaces as DependencyUnavailableError: 503000 with
// Retry-After for the client, whose retry the Idempotency-Key makes safe. Never 500000. A deadlock or
// serialization failure rolled the work back whole: a statement on its own is sent once more, a
// transaction's surfaces as DependencyUnavailableError too (isConcurrencyFailure).
import { DependencyUnavailableError } from "@crm/errors";
import pg from "pg";

/** SQLSTATE classes and codes that mean the connection, not the statement, failed. */
const CONNECTION_SQLSTATES = new Set([
  "57P01", // admin_shutdown: the backend was terminated (pg_terminate_backend, a fast shutdown)
  "57P02", // crash_shutdown
  "57P03", // cannot_connect_now: starting up, shutting down, in recovery
  "53300", // too_many_connections
]);
/** Node's socket errors, and pg's own words for a connection that went away. */
const SOCKET_ERRORS = new Set(["ECONNREFUSED", "ECONNRESET", "EPIPE", "ETIMEDOUT", "EHOSTUNREACH", "ENETUNREACH", "ENOTFOUND", "EAI_AGAIN"]);
const CONNECTION_MESSAGES = [
  "Connection terminated",
  "connection error and is not queryable",
  "Client was closed and is not queryable",
  "timeout exceeded when trying to connect",
  "Client network socket disconnected",
];

/**
 * SQLSTATEs with which PostgreSQL rolls a transaction back because of a concurrent one, not because
 * of anything in it: the same work sent again may well succeed. Nothing of it was written.
 */
const CONCURRENCY_SQLSTATES = new Set([
  "40P01", // deadlock_detected
  "40001", // serialization_failure
]);

/** Whether PostgreSQL rolled the statement's transaction back for a concurrent one's sake (CONCURRENCY_SQLSTATES). */
export function isConcurrencyFailure(err: unknown): boolean {
  return CONCURRENCY_SQLSTATES.has((err as { code?: unknown } | null)?.code as string);
}

/** Whether `err` says the connection to PostgreSQL failed (as opposed to the statement). */
export function isConnectionFault(err: unknown): boolean {
  // Not `instanceof Error`: Node's socket errors come from another realm under some runners (jest).
  if (typeof err !== "object" || err === null) return false;
  const { code, message } = err as { code?: unknown; message?: unknown };
  if (typeof code === "string" && (code.startsWith("08") || CONNECTION_SQLSTATES.has(code) || SOCKET_ERRORS.has(code))) return true;
  return typeof message === "string" && CONNECTION_MESSAGES.some((words) => message.includes(words));
}

/**
 * A read: a statement that starts with SELECT and takes no row locks. Sending it again changes
 * nothing. (A SELECT of a function that writes would not be one; no statement here is like that.)
 */
export function isRead(text: string): boolean {
  return /^\s*select\b/i.test(text) && !/\bfor\s+(update|share|no\s+key\s+update|key\s+share)\b/i.test(text);
}

/**
 * Longest a new connection may take to be made: a server behind a network partition answers
 * nothing, and a request must not wait on it without end (pg's default). Only the making of a
 * connection: waiting for a free connection of a busy pool is not bounded by this.
 */
const CONNECT_TIMEOUT_MS = 5_000;

function unavailable(err: unknown, what: string): DependencyUnavailableError {
  return new DependencyUnavailableError("database", what, { cause: err });
}

type QueryConfig = string | { text: string };

/**
 * Connections of this pool report a lost connection as DependencyUnavailableError: what a
 * transaction (Prisma's adapter runs one on a client it takes from the pool) sees when its
 * connection is lost mid-way.
 */
class FaultReportingClient extends pg.Client {
  constructor(config?: pg.ClientConfig) {
    super({ connectionTimeoutMillis: CONNECT_TIMEOUT_MS, ...config });
  }

  // biome-ignore lint/suspicious/noExplicitAny: pg's query() has a dozen overloads; this one passes them all on.
  override query(...args: any[]): any {
    const result = (super.query as (...a: unknown[]) => unknown)(...args);
    if (typeof args[args.length - 1] === "function" || typeof (result as Promise<unknown> | undefined)?.then !== "function") return result;
    return (result as Promise<unknown>).catch((err: unknown) => {
      if (isConnectionFault(err)) throw unavailable(err, "the database connection was lost during a transaction");
      // The transaction is lost whole; the caller's retry is safe (an answer 503000 with Retry-After).
      if (isConcurrencyFailure(err)) throw unavailable(err, "the transaction was rolled back for a concurrent one (nothing was written)");
      throw err;
    });
  }
}

/** pg's Pool, with a read retried once on a fresh connection and connection faults reported as such. */
export class FaultTolerantPool extends pg.Pool {
  constructor(config: pg.PoolConfig) {
    super({ ...config, Client: FaultReportingClient });
  }

  // biome-ignore lint/suspicious/noExplicitAny: as pg's own; callback calls are passed on untouched.
  override query(...args: any[]): any {
    const [config, values] = args as [QueryConfig, unknown];
    if (args.some((arg) => typeof arg === "function")) return (super.query as (...a: unknown[]) => unknown)(...args);
    const once = (super.query as (config: QueryConfig, values: unknown) => Promise<pg.QueryResult>).bind(this);
    return once(config, values).catch((err: unknown) => this.afterFailure(err, config, values));
  }

  private async afterFailure(err: unknown, config: QueryConfig, values: unknown): Promise<pg.QueryResult> {
    if (isConcurrencyFailure(err)) return this.afterConcurrencyFailure(config, values);
    if (!isConnectionFault(err)) throw err;
    if (!isRead(typeof config === "string" ? config : config.text)) throw unavailable(err, "the database connection was lost; the write may or may not have committed");
    try {
      return await this.onFreshConnection(config, values);
    } catch (again) {
      throw isConnectionFault(again) ? unavailable(again, "the database could not be reached") : again;
    }
  }

  /**
   * A statement on its own (no transaction around it) that PostgreSQL rolled back for a concurrent
   * transaction: nothing of it was written, so it is sent once more; a second failure is reported as
   * the database being unavailable for now (503000 with Retry-After), never as the caller's fault.
   */
  private async afterConcurrencyFailure(config: QueryConfig, values: unknown): Promise<pg.QueryResult> {
    const once = super.query as (config: QueryConfig, values: unknown) => Promise<pg.QueryResult>;
    try {
      return await once.call(this, config, values);
    } catch (again) {
      throw isConcurrencyFailure(again) ? unavailable(again, "the statement was rolled back twice for concurrent transactions (nothing was written)") : again;
    }
  }

  /**
   * A connection of its own rather than one from the pool: when a server restarts or fails over,
   * every idle connection in the pool is dead too, and each would fail the retry the same way.
   * At most as many as the pool's connections failed at once (one per statement in flight).
   */
  private async onFreshConnection(config: QueryConfig, values: unknown): Promise<pg.QueryResult> {
    const client = new pg.Client({ connectionTimeoutMillis: CONNECT_TIMEOUT_MS, ...this.options });
    client.on("error", () => undefined);
    await client.connect();
    try {
      return await (client.query as (config: QueryConfig, values: unknown) => Promise<pg.QueryResult>)(config, values);
    } finally {
      await client.end().catch(() => undefined);
    }
  }
}
