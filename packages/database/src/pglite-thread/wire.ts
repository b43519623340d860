// What crosses between the main thread and the thread that runs embedded PGlite (./client.ts,
// ../workers/pglite.ts): requests, answers, and errors rebuilt as the classes PGlite throws.
//
// Parameters cross by structured clone. A query's answer crosses as PostgreSQL's protocol bytes (one
// transferred buffer) and is parsed on the caller's side, with the caller's own parsers (Prisma's
// adapter passes some), exactly as PGlite's `query` would (../raw-result.ts).
import { messages, TransactionAbortedError } from "@electric-sql/pglite";

/** What the thread needs of PGlite's query options; parsers and rowMode are applied by the caller. */
export interface WireQueryOptions {
  paramTypes?: number[];
}

export type Request =
  /**
   * maintenanceIntervalMs: how often autovacuum's job checks the counters (../autovacuum.ts; its
   * default otherwise). Answered with the array types PGlite registered parsers for.
   */
  | { id: number; op: "open"; dataDir: string; maintenanceIntervalMs?: number }
  /** Answered with the statement's protocol bytes (a Uint8Array). */
  | { id: number; op: "query"; text: string; params: unknown[]; options: WireQueryOptions; tx?: number }
  | { id: number; op: "exec"; text: string; tx?: number }
  /** Opens a transaction; its answer comes once BEGIN ran, and the request's id names it. */
  | { id: number; op: "begin" }
  | { id: number; op: "rollback"; tx: number }
  /** The transaction's callback is over: commit (true) or roll back (false), as PGlite does. */
  | { id: number; op: "end"; tx: number; commit: boolean }
  | { id: number; op: "close" };

export type Answer = { id: number; ok: true; value?: unknown } | { id: number; ok: false; error: WireError };

export interface WireError {
  kind: "database" | "aborted" | "other";
  message: string;
  name?: string;
  length?: number;
  /** A DatabaseError's own fields: severity, code, detail, hint, position, schema, table, column, constraint ... */
  fields?: Record<string, string | number | undefined>;
}

// Set on a DatabaseError by PGlite (makePGliteError) from the query; the client sets them from its own.
const QUERY_FIELDS = new Set(["query", "params", "queryOptions", "length", "name"]);

export function toWireError(err: unknown): WireError {
  if (err instanceof messages.DatabaseError) {
    const fields: Record<string, string | number | undefined> = {};
    for (const [key, value] of Object.entries(err)) {
      if (!QUERY_FIELDS.has(key) && (value === undefined || typeof value === "string" || typeof value === "number")) fields[key] = value;
    }
    return { kind: err instanceof TransactionAbortedError ? "aborted" : "database", message: err.message, name: err.name, length: err.length, fields };
  }
  if (err instanceof Error) return { kind: "other", message: err.message, name: err.name };
  return { kind: "other", message: String(err) };
}

/** The error PGlite would have thrown in this thread, with the caller's query, parameters and options on it. */
export function fromWireError(wire: WireError, query?: { text: string; params: unknown[] | undefined; options: unknown }): Error {
  let err: Error;
  if (wire.kind === "other") {
    err = new Error(wire.message);
    if (wire.name && wire.name !== "Error") Object.defineProperty(err, "name", { value: wire.name, configurable: true, writable: true });
    return err;
  }
  err = wire.kind === "aborted" ? new TransactionAbortedError() : new messages.DatabaseError(wire.message, wire.length ?? 0, (wire.name ?? "error") as messages.MessageName);
  Object.assign(err, wire.fields);
  if (query) Object.assign(err, { query: query.text, params: query.params, queryOptions: query.options });
  return err;
}
