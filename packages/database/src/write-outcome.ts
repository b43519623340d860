// What became of a write whose connection to PostgreSQL failed (issue 42), told apart in one place so
// every service answers alike: `not-written` (nothing of it was kept: the client's retry may run it
// again) or `in-doubt` (it may have committed: a retry must not run it a second time). The pure rules
// are here; ./commit-settlement.ts asks PostgreSQL itself when a lost COMMIT can still be settled.
import { DependencyUnavailableError, type WriteOutcome } from "@crm/errors";

/**
 * Connection failures that happen before a statement reaches the server: it cannot have done
 * anything. (A socket reset or a terminated backend can come after the server got the statement.)
 */
const NOT_REACHED_CODES = new Set([
  "ECONNREFUSED",
  "ENOTFOUND",
  "EAI_AGAIN",
  "57P03", // cannot_connect_now: the server refused the connection (starting up, shutting down, in recovery)
  "53300", // too_many_connections: refused at connect
]);
const NOT_REACHED_MESSAGES = [
  "timeout exceeded when trying to connect", // the pool's wait for a connection
  "connection error and is not queryable", // pg refuses to send on a client whose connection failed earlier
  "Client was closed and is not queryable",
];

/** Errors of connections that failed while being made (markNeverReached): whatever their code. */
const failedConnecting = new WeakSet<object>();

/** Marks `err` as the failure of a connection being made: no statement was sent on it. */
export function markNeverReached<T>(err: T): T {
  if (typeof err === "object" && err !== null) failedConnecting.add(err);
  return err;
}

/** Whether a failed statement certainly never reached the server (its connection failed first). */
export function neverReachedServer(err: unknown): boolean {
  if (typeof err !== "object" || err === null) return false;
  if (failedConnecting.has(err)) return true;
  const { code, message } = err as { code?: unknown; message?: unknown };
  if (typeof code === "string" && NOT_REACHED_CODES.has(code)) return true;
  return typeof message === "string" && NOT_REACHED_MESSAGES.some((words) => message.includes(words));
}

/**
 * A read: a statement that starts with SELECT and takes no row locks. Sending it again changes
 * nothing. (A SELECT of a function that writes would not be one; no statement here is like that.)
 */
export function isRead(text: string): boolean {
  return /^\s*select\b/i.test(text) && !/\bfor\s+(update|share|no\s+key\s+update|key\s+share)\b/i.test(text);
}

/**
 * Whether a statement inside a transaction may write: anything but a read and the statements that
 * manage the transaction or the session (BEGIN, SET, SAVEPOINT, RELEASE, ROLLBACK TO, SHOW).
 */
export function mayWrite(text: string): boolean {
  return !isRead(text) && !isTransactionStart(text) && !/^\s*(set|savepoint|release|show|rollback\s+to)\b/i.test(text);
}

/** The statement commits a transaction: COMMIT or END (not COMMIT PREPARED, which nothing here sends). */
export function isCommit(text: string): boolean {
  return /^\s*(commit|end)\b(?!\s+prepared)\s*(transaction|work)?\s*;?\s*$/i.test(text);
}

/** The statement opens a transaction. */
export function isTransactionStart(text: string): boolean {
  return /^\s*(begin|start\s+transaction)\b/i.test(text);
}

/** The statement closes a transaction either way (ROLLBACK TO SAVEPOINT does not). */
export function isTransactionEnd(text: string): boolean {
  return isCommit(text) || (/^\s*(rollback|abort)\b/i.test(text) && !/^\s*rollback\s+to\b/i.test(text));
}

/**
 * A statement whose connection failed, as a whole (not COMMIT: see ./commit-settlement.ts):
 * - inside a transaction nothing is kept, since PostgreSQL rolls back a transaction whose connection
 *   ends before its COMMIT;
 * - on its own, a read wrote nothing, and a write that never reached the server neither; any other
 *   write may have committed (PostgreSQL commits a statement on its own as it ends, before answering).
 */
export function outcomeOfLostStatement(context: { inTransaction: boolean; read: boolean }, err: unknown): WriteOutcome {
  if (context.inTransaction || context.read || neverReachedServer(err)) return "not-written";
  return "in-doubt";
}

/** The DependencyUnavailableError (503000) for a database fault whose write ended as `outcome`. */
export function databaseUnavailable(err: unknown, what: string, outcome: WriteOutcome): DependencyUnavailableError {
  return new DependencyUnavailableError("database", what, { cause: err, outcome });
}
