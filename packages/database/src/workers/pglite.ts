// The thread embedded PGlite runs on (started by ../pglite-thread/client.ts; `pnpm build` bundles
// it to dist/workers/pglite.js). One PGlite (with its prepared statements, ../prepared-pglite.ts)
// answers the main thread's requests in the order they arrive; PGlite's own mutexes serialise them
// and hold every other statement back while a transaction is open, as they do in one thread.
// Autovacuum's job, which single-user PostgreSQL does not do, runs here too (../autovacuum.ts).
import type { PGlite, Transaction } from "@electric-sql/pglite";
import { parentPort } from "node:worker_threads";
import { Autovacuum } from "../autovacuum";
import { createPglite } from "../pglite";
import { type Answer, type Request, toWireError, type WireQueryOptions } from "../pglite-thread/wire";

const port = parentPort;
if (!port) throw new Error("workers/pglite runs as a worker thread");

let pglite: PGlite | undefined;
let autovacuum: Autovacuum | undefined;

interface OpenTransaction {
  tx: Transaction;
  /** Ends the transaction's callback: true commits, false rolls back. */
  finish(commit: boolean): void;
  /** The transaction as PGlite ends it (COMMIT or ROLLBACK done). */
  done: Promise<void>;
}
const transactions = new Map<number, OpenTransaction>();

// Thrown out of a transaction's callback to have PGlite roll it back; not an error of the caller's.
const ROLL_BACK = Symbol("roll back");

const identity = (value: string) => value;
const textParsers = new Map<string, Record<number, (value: string) => string>>();

/** PGlite's options for the request: the caller's own parsers' types left as text. */
function queryOptions(options: WireQueryOptions) {
  const { textTypes, ...rest } = options;
  if (!textTypes || textTypes.length === 0) return rest;
  const key = textTypes.join(",");
  let parsers = textParsers.get(key);
  if (!parsers) textParsers.set(key, (parsers = Object.fromEntries(textTypes.map((type) => [type, identity]))));
  return { ...rest, parsers };
}

function database(): PGlite {
  if (!pglite) throw new Error("PGlite is not open");
  return pglite;
}

function transaction(id: number): Transaction {
  const open = transactions.get(id);
  // What PGlite's own transaction object says once it is over.
  if (!open) throw new Error("Transaction is closed");
  return open.tx;
}

/** Starts transaction `id`; resolves with it once BEGIN ran (the callback is entered), rejects if BEGIN failed. */
function begin(id: number): Promise<number> {
  return new Promise((entered, failed) => {
    let finish!: (commit: boolean) => void;
    const ended = new Promise<boolean>((resolve) => (finish = resolve));
    let inside = false;
    const done = database()
      .transaction(async (tx) => {
        inside = true;
        transactions.set(id, { tx, finish, done });
        entered(id);
        if (!(await ended)) throw ROLL_BACK;
      })
      .then(
        () => undefined,
        (err: unknown) => {
          if (!inside) failed(err);
          if (err !== ROLL_BACK) throw err;
        },
      )
      .finally(() => transactions.delete(id));
    // Not entered: the failure was reported to begin; entered: `end` reports how it ended.
    done.catch(() => undefined);
  });
}

async function end(id: number, commit: boolean): Promise<void> {
  const open = transactions.get(id);
  if (!open) throw new Error("Transaction is closed");
  open.finish(commit);
  await open.done;
}

async function handle(request: Request): Promise<unknown> {
  autovacuum?.noteUse();
  switch (request.op) {
    case "open":
      pglite = await createPglite(request.dataDir);
      autovacuum = await Autovacuum.start(pglite, request.maintenanceIntervalMs);
      return undefined;
    case "query": {
      const target = request.tx === undefined ? database() : transaction(request.tx);
      return target.query(request.text, request.params, queryOptions(request.options));
    }
    case "exec":
      return (request.tx === undefined ? database() : transaction(request.tx)).exec(request.text);
    case "begin":
      return begin(request.id);
    case "rollback":
      return transaction(request.tx).rollback();
    case "end":
      return end(request.tx, request.commit);
    case "close":
      // Maintenance ends first (after its statement in progress); PGlite then runs what was sent before close.
      await autovacuum?.stop();
      await pglite?.close();
      pglite = undefined;
      return undefined;
  }
}

port.on("message", (request: Request) => {
  handle(request).then(
    (value) => {
      port.postMessage({ id: request.id, ok: true, value } satisfies Answer);
      // Closed: the thread ends on its own once the answer is out (its exit handlers run).
      if (request.op === "close") port.close();
    },
    (err: unknown) => port.postMessage({ id: request.id, ok: false, error: toWireError(err) } satisfies Answer),
  );
});
