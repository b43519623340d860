// The one place a service's PostgreSQL connections meet connection faults: a server restart or
// failover, a backend terminated by an operator, a network blip. Every statement, Prisma's (through
// its pg adapter) and raw SQL's alike, goes through this pool. A read that fails because its
// connection was lost is sent once more on a fresh connection; anything that still fails surfaces as
// DependencyUnavailableError: 503000 with Retry-After for the client, never 500000. Each such error
// says what became of the write (./write-outcome.ts, issue 42): `not-written` (a transaction that
// never committed, a statement that never reached the server: the retry may run it again) or
// `in-doubt` (a statement on its own that may have committed: the gateway keeps the Idempotency-Key
// so that the retry does not run it twice). A COMMIT whose answer was lost is settled by asking the
// server (./commit-settlement.ts): committed is answered as committed. A deadlock or serialization
// failure rolled the work back whole: a statement on its own is sent once more, a transaction's
// surfaces as DependencyUnavailableError too (isConcurrencyFailure).
import type { DependencyUnavailableError, WriteOutcome } from "@crm/errors";
import pg from "pg";
import { settleLostCommit } from "./commit-settlement";
import { databaseUnavailable, isCommit, isRead, isTransactionEnd, isTransactionStart, markNeverReached, mayWrite, outcomeOfLostStatement } from "./write-outcome";

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
 * Longest a new connection may take to be made: a server behind a network partition answers
 * nothing, and a request must not wait on it without end (pg's default). Only the making of a
 * connection: waiting for a free connection of a busy pool is not bounded by this.
 */
const CONNECT_TIMEOUT_MS = 5_000;

function unavailable(err: unknown, what: string, outcome: WriteOutcome = "not-written"): DependencyUnavailableError {
  return databaseUnavailable(err, what, outcome);
}

type QueryConfig = string | { text: string };

function textOf(config: unknown): string | undefined {
  if (typeof config === "string") return config;
  const text = (config as { text?: unknown } | null)?.text;
  return typeof text === "string" ? text : undefined;
}

/** What a COMMIT answers, for one whose answer was lost but which the server says committed. */
const COMMITTED: pg.QueryResult = { command: "COMMIT", rowCount: null, oid: 0, rows: [], fields: [] };

/**
 * Connections of this pool report a lost connection as DependencyUnavailableError: what a
 * transaction (Prisma's adapter runs one on a client it takes from the pool) sees when its
 * connection is lost mid-way. Each follows its transaction (BEGIN ... COMMIT or ROLLBACK) so that a
 * lost statement inside one is known not written, and asks for the transaction's id before its
 * COMMIT so that a COMMIT whose answer is lost can be settled (./commit-settlement.ts).
 */
class FaultReportingClient extends pg.Client {
  private inTransaction = false;
  /** Whether the open transaction was sent a statement that may write (else its COMMIT has nothing to lose). */
  private mayHaveWritten = false;
  private readonly settings: pg.ClientConfig;

  constructor(config?: pg.ClientConfig) {
    const settings = { connectionTimeoutMillis: CONNECT_TIMEOUT_MS, ...config };
    super(settings);
    this.settings = settings;
    // pg emits "error" when the connection is lost while the client is checked out (a transaction
    // between statements, or the FIN read in the same tick as the error of the statement in flight),
    // and pg-pool listens only while the client is idle: unheard, the EventEmitter throws and the
    // process exits. Nothing is lost by listening here: statements in flight have already failed,
    // later ones fail as not queryable (a connection fault, so DependencyUnavailableError), and the
    // pool drops a client that is not queryable when it is released.
    this.on("error", () => undefined);
  }

  /** A failure to connect is marked: the statement the pool took this connection for was never sent. */
  // biome-ignore lint/suspicious/noExplicitAny: pg's connect() has a callback and a promise form; both are passed on.
  override connect(...args: any[]): any {
    const [callback] = args as [((err: Error | null, client?: pg.Client) => void) | undefined];
    if (callback) return super.connect(((err: Error | null, client?: pg.Client) => callback(err ? markNeverReached(err) : err, client)) as (err: Error) => void);
    return super.connect().catch((err: unknown) => {
      throw markNeverReached(err);
    });
  }

  // biome-ignore lint/suspicious/noExplicitAny: pg's query() has a dozen overloads; this one passes them all on.
  override query(...args: any[]): any {
    const text = textOf(args[0]);
    if (text !== undefined && this.inTransaction && isCommit(text) && typeof args[args.length - 1] !== "function") return this.commit(args);
    if (this.inTransaction && text !== undefined && mayWrite(text)) this.mayHaveWritten = true;
    const result = (super.query as (...a: unknown[]) => unknown)(...args);
    if (typeof args[args.length - 1] === "function" || typeof (result as Promise<unknown> | undefined)?.then !== "function") return result;
    return (result as Promise<unknown>).then(
      (value) => {
        if (text !== undefined) this.follow(text);
        return value;
      },
      (err: unknown) => {
        throw this.reported(err, text);
      },
    );
  }

  /** Whether this connection is inside a transaction after `text` succeeded. */
  private follow(text: string): void {
    if (isTransactionStart(text)) {
      this.inTransaction = true;
      this.mayHaveWritten = false;
    } else if (isTransactionEnd(text)) this.inTransaction = false;
  }

  private reported(err: unknown, text: string | undefined): unknown {
    const context = { inTransaction: this.inTransaction, read: text !== undefined && isRead(text) };
    if (isConnectionFault(err)) {
      this.inTransaction = false;
      const outcome = outcomeOfLostStatement(context, err);
      return unavailable(err, context.inTransaction ? "the database connection was lost during a transaction (nothing was written)" : "the database connection was lost", outcome);
    }
    // The transaction is lost whole; the caller's retry is safe (an answer 503000 with Retry-After).
    if (isConcurrencyFailure(err)) return unavailable(err, "the transaction was rolled back for a concurrent one (nothing was written)");
    return err;
  }

  /**
   * COMMIT, with the transaction's id asked first (one more round trip per transaction that may have
   * written; none for one of reads only): when the connection is lost before COMMIT's answer, the
   * server is asked whether that transaction committed. Committed is answered as COMMIT answers;
   * rolled back is `not-written`; no answer within the budget is `in-doubt`. A transaction that wrote
   * nothing has no id and nothing to lose.
   */
  private async commit(args: unknown[]): Promise<unknown> {
    let xid: string | null = null;
    if (this.mayHaveWritten) {
      const asked = (await this.query("SELECT txid_current_if_assigned()::text AS xid")) as pg.QueryResult<{ xid: string | null }>;
      xid = asked.rows[0]?.xid ?? null;
    }
    const pid = (this as unknown as { processID: number | null }).processID;
    try {
      return await (super.query as (...a: unknown[]) => Promise<unknown>)(...args);
    } catch (err) {
      if (isConcurrencyFailure(err)) throw unavailable(err, "the transaction was rolled back at COMMIT for a concurrent one (nothing was written)");
      if (!isConnectionFault(err)) throw err;
      if (xid === null) throw unavailable(err, "the database connection was lost at COMMIT of a transaction that wrote nothing");
      const outcome = await settleLostCommit(this.settings, { xid, pid: pid ?? -1 });
      if (outcome === "committed") return COMMITTED;
      if (outcome === "aborted") throw unavailable(err, "the database connection was lost at COMMIT; the server rolled the transaction back");
      throw unavailable(err, "the database connection was lost at COMMIT; whether it committed could not be told", "in-doubt");
    } finally {
      this.inTransaction = false;
    }
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
    if (!isRead(typeof config === "string" ? config : config.text)) {
      const outcome = outcomeOfLostStatement({ inTransaction: false, read: false }, err);
      throw unavailable(err, outcome === "in-doubt" ? "the database connection was lost; the write may or may not have committed" : "the database could not be reached", outcome);
    }
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
      if (isConcurrencyFailure(again)) throw unavailable(again, "the statement was rolled back twice for concurrent transactions (nothing was written)");
      if (!isConnectionFault(again)) throw again;
      const outcome = outcomeOfLostStatement({ inTransaction: false, read: isRead(typeof config === "string" ? config : config.text) }, again);
      throw unavailable(again, "the database connection was lost when the statement was sent again", outcome);
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
