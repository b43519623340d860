// Embedded PGlite on a thread of its own, behind the part of PGlite's interface the product uses
// (Prisma's PGlite adapter, the migration runner, readiness checks): query, exec, transaction, close.
//
// Why: in embedded mode the four services, the bus and PGlite share one process, and PGlite's wasm
// and its own JS (protocol, parsing) were about half of that process's CPU, all on the main thread,
// so the process used one core of two (docs/performance.md, "Embedded mode"). Here the database's
// work runs on a worker thread and the main thread only sends requests and receives results.
//
// Results and errors are PGlite's own: the thread runs PGlite's query/exec/transaction and sends
// their results back (a query's as protocol bytes, parsed here into PGlite's Results: ../raw-result.ts);
// a DatabaseError comes back as a DatabaseError with every field PostgreSQL
// reported (code, detail, constraint, table, column ...: Prisma maps them to its error codes), plus
// the caller's query, parameters and options, as PGlite sets them. Transactions are PGlite's too:
// the thread opens one with PGlite's `transaction`, runs the caller's statements in it, and commits
// or rolls back when the caller's callback ends, so everything else waits meanwhile, as before.
import type { PGlite, Results, Transaction } from "@electric-sql/pglite";
import { once } from "node:events";
import path from "node:path";
import type { EventLoopUtilization } from "node:perf_hooks";
import { Worker } from "node:worker_threads";
import type { WriteOutcome } from "@crm/errors";
import { databaseUnavailable, isRead } from "../write-outcome";
import { databaseParsers, parseRawResult } from "../raw-result";
import { type Answer, fromWireError, type Request, type WireQueryOptions } from "./wire";

/** How long a closed thread may take to end by itself. */
const CLOSE_GRACE_MS = 10_000;

type QueryOptions = Parameters<PGlite["query"]>[2];
type Parsers = NonNullable<NonNullable<QueryOptions>["parsers"]>;

/** What the product uses of PGlite; the adapter and the migration runner see only this. */
export type EmbeddedPglite = Pick<PGlite, "query" | "exec" | "transaction" | "close">;

/** Where `pnpm build` leaves the thread's code (this package's src/workers/pglite.ts, bundled). */
export function workerPath(): string {
  return path.resolve(__dirname, "../../dist/workers/pglite.js");
}

type Distribute<T> = T extends unknown ? Omit<T, "id"> : never;
type Call = Distribute<Request>;

interface Pending {
  resolve(value: unknown): void;
  reject(err: Error): void;
  /** For errors: the query as the caller gave it. */
  query?: { text: string; params: unknown[] | undefined; options: unknown };
  /** What became of its write if the thread ends before answering (outcomeIfThreadEnds). */
  ifLost: WriteOutcome;
}

/**
 * What a call's write became when the thread ends before answering it (issue 42, as for a lost
 * PostgreSQL connection: ../write-outcome.ts): a COMMIT, or a write on its own, may have been applied
 * and kept (in doubt); anything inside a transaction was not (the transaction never committed), nor
 * was a read.
 */
export function outcomeIfThreadEnds(request: Call): WriteOutcome {
  if (request.op === "end") return request.commit ? "in-doubt" : "not-written";
  if ((request.op === "query" || request.op === "exec") && request.tx === undefined && !isRead(request.text)) return "in-doubt";
  return "not-written";
}

export class PgliteThread implements EmbeddedPglite {
  private readonly worker: Worker;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  /** Set once the thread is gone (closed or crashed): every later call fails with it. */
  private gone: Error | undefined;
  /** PGlite's parsers for this database (set by open), and merged with each caller's own. */
  private parsers: Parsers = {};
  private readonly withCallers = new WeakMap<Parsers, Parsers>();

  private constructor() {
    this.worker = new Worker(workerPath());
    // The thread keeps the process alive only while a request is outstanding (as PGlite on the
    // main thread holds nothing between statements).
    this.worker.unref();
    this.worker.on("message", (answer: Answer) => this.answer(answer));
    this.worker.on("error", (err) => this.fail(new Error(`the embedded database's thread failed: ${err.message}`)));
    this.worker.on("exit", (code) => this.fail(new Error(`the embedded database's thread exited (code ${code})`)));
  }

  /** Opens (creating when needed) the PGlite data directory `dataDir` on a new thread, which also
   * vacuums and analyzes it as autovacuum would (../autovacuum.ts; `maintenanceIntervalMs` for tests). */
  static async open(dataDir: string, options: { maintenanceIntervalMs?: number } = {}): Promise<PgliteThread> {
    const thread = new PgliteThread();
    try {
      const arrayTypes = (await thread.call({ op: "open", dataDir, ...options })) as Array<{ oid: number; typarray: number }>;
      thread.parsers = databaseParsers(arrayTypes);
    } catch (err) {
      await thread.worker.terminate();
      throw err;
    }
    return thread;
  }

  query<T>(text: string, params?: unknown[], options?: QueryOptions): Promise<Results<T>> {
    return this.runQuery<T>(text, params, options, undefined);
  }

  async exec(text: string, options?: QueryOptions): Promise<Array<Results>> {
    if (options && Object.keys(options).length > 0) throw new TypeError("exec options are not supported by the embedded database's thread");
    return (await this.call({ op: "exec", text }, { text, params: undefined, options })) as Array<Results>;
  }

  async transaction<T>(callback: (tx: Transaction) => Promise<T>): Promise<T> {
    const id = (await this.call({ op: "begin" })) as number;
    let closed = false;
    const tx: Transaction = {
      query: <R>(text: string, params?: unknown[], options?: QueryOptions) => this.runQuery<R>(text, params, options, id),
      exec: async (text: string) => (await this.call({ op: "exec", text, tx: id }, { text, params: undefined, options: undefined })) as Array<Results>,
      sql: () => Promise.reject(new TypeError("tx.sql is not supported by the embedded database's thread")),
      listen: () => Promise.reject(new TypeError("tx.listen is not supported by the embedded database's thread")),
      rollback: async () => {
        await this.call({ op: "rollback", tx: id });
        closed = true;
      },
      get closed() {
        return closed;
      },
    };
    let result: T;
    try {
      result = await callback(tx);
    } catch (err) {
      closed = true;
      // PGlite rolls back and throws the callback's error (or the rollback's, if that failed).
      await this.call({ op: "end", tx: id, commit: false });
      throw err;
    }
    closed = true;
    await this.call({ op: "end", tx: id, commit: true }, { text: "COMMIT", params: undefined, options: undefined });
    return result;
  }

  /** How busy the database's thread has been (since `previous`): the embedded product's ceiling. */
  eventLoopUtilization(previous?: EventLoopUtilization): EventLoopUtilization {
    return this.worker.performance.eventLoopUtilization(previous);
  }

  /** Closes PGlite (after every statement already sent) and ends the thread. */
  async close(): Promise<void> {
    if (this.gone) return;
    const exited = once(this.worker, "exit");
    await this.call({ op: "close" });
    this.gone = new Error("PGlite is closed");
    // The thread ends itself once PGlite is closed; it is only forced if that does not happen.
    const timer = setTimeout(() => void this.worker.terminate(), CLOSE_GRACE_MS);
    await exited;
    clearTimeout(timer);
  }

  private async runQuery<T>(text: string, params: unknown[] | undefined, options: QueryOptions, tx: number | undefined): Promise<Results<T>> {
    const wire = checkOptions(options);
    params?.forEach(checkParam);
    const bytes = (await this.call({ op: "query", text, params: params ?? [], options: wire, tx }, { text, params, options })) as Uint8Array;
    return parseRawResult<T>(bytes, this.parsersWith(options?.parsers), options?.rowMode);
  }

  /** PGlite's parsers with the caller's over them, as PGlite's parseResults merges them (once per parsers object). */
  private parsersWith(own: Parsers | undefined): Parsers {
    if (!own) return this.parsers;
    let merged = this.withCallers.get(own);
    if (!merged) this.withCallers.set(own, (merged = { ...this.parsers, ...own }));
    return merged;
  }

  private call(request: Call, query?: Pending["query"]): Promise<unknown> {
    // Never sent: nothing was written (a 503000 the client may retry, not a 500000).
    if (this.gone) return Promise.reject(databaseUnavailable(this.gone, this.gone.message, "not-written"));
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      if (this.pending.size === 0) this.worker.ref();
      this.pending.set(id, { resolve, reject, query, ifLost: outcomeIfThreadEnds(request) });
      this.worker.postMessage({ ...request, id } as Request);
    });
  }

  private answer(answer: Answer): void {
    const pending = this.pending.get(answer.id);
    if (!pending) return;
    this.settled(answer.id);
    if (answer.ok) pending.resolve(answer.value);
    else pending.reject(fromWireError(answer.error, pending.query));
  }

  private settled(id: number): void {
    this.pending.delete(id);
    if (this.pending.size === 0) this.worker.unref();
  }

  private fail(err: Error): void {
    this.gone ??= err;
    for (const [id, pending] of this.pending) {
      this.settled(id);
      pending.reject(databaseUnavailable(this.gone, this.gone.message, pending.ifLost));
    }
  }
}

const SUPPORTED_OPTIONS = new Set(["rowMode", "parsers", "paramTypes"]);

/** The options that cross to the thread (rowMode and the caller's parsers are applied here). */
function checkOptions(options: QueryOptions): WireQueryOptions {
  if (!options) return {};
  for (const key of Object.keys(options)) {
    if (!SUPPORTED_OPTIONS.has(key)) throw new TypeError(`query option ${key} is not supported by the embedded database's thread`);
  }
  return options.paramTypes ? { paramTypes: options.paramTypes } : {};
}

/**
 * A parameter must cross as itself: structured clone keeps plain data (and Dates, byte arrays) but
 * would silently turn an instance of a class into a plain object, which PGlite would then
 * serialise differently (its toString or toJSON lost). Refused loudly instead; none is passed today.
 */
function checkParam(value: unknown, index: number): void {
  if (value === null || typeof value !== "object") return;
  if (Array.isArray(value)) {
    for (const element of value) checkParam(element, index);
    return;
  }
  const prototype = Object.getPrototypeOf(value);
  if (prototype === Object.prototype || prototype === null || value instanceof Date || ArrayBuffer.isView(value)) return;
  throw new TypeError(`parameter $${index + 1} (${prototype?.constructor?.name ?? "object"}) cannot be sent to the embedded database's thread: pass plain data`);
}
