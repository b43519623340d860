// The thread embedded PGlite runs on (started by ../pglite-thread/client.ts; `pnpm build` bundles
// it to dist/workers/pglite.js). One PGlite (with its prepared statements, ../prepared-pglite.ts)
// answers the main thread's requests in the order they arrive; PGlite's own mutexes serialise them
// and hold every other statement back while a transaction is open, as they do in one thread.
// Autovacuum's job, which single-user PostgreSQL does not do, runs here too (../autovacuum.ts).
import { parentPort } from "node:worker_threads";
import { Autovacuum } from "../autovacuum";
import { createPglite } from "../pglite";
import type { PreparedPGlite, RawTransaction } from "../prepared-pglite";
import { type Answer, type Request, toWireError } from "../pglite-thread/wire";
import { ARRAY_TYPES_QUERY } from "../raw-result";

const port = parentPort;
if (!port) throw new Error("workers/pglite runs as a worker thread");

let pglite: PreparedPGlite | undefined;
let autovacuum: Autovacuum | undefined;

interface OpenTransaction {
  tx: RawTransaction;
  /** Ends the transaction's callback: true commits, false rolls back. */
  finish(commit: boolean): void;
  /** The transaction as PGlite ends it (COMMIT or ROLLBACK done). */
  done: Promise<void>;
}
const transactions = new Map<number, OpenTransaction>();

// Thrown out of a transaction's callback to have PGlite roll it back; not an error of the caller's.
const ROLL_BACK = Symbol("roll back");

function database(): PreparedPGlite {
  if (!pglite) throw new Error("PGlite is not open");
  return pglite;
}

function transaction(id: number): RawTransaction {
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
    case "open": {
      pglite = await createPglite(request.dataDir);
      autovacuum = await Autovacuum.start(pglite, request.maintenanceIntervalMs);
      // The caller parses results (its parsers need the array types PGlite registered at start).
      return (await pglite.query<{ oid: number; typarray: number }>(ARRAY_TYPES_QUERY)).rows;
    }
    case "query": {
      // The answer's bytes, parsed by the caller: see ../raw-result.ts.
      const target = request.tx === undefined ? database() : transaction(request.tx);
      return target.queryRaw(request.text, request.params, request.options);
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
      // A query's bytes are moved, not copied.
      port.postMessage({ id: request.id, ok: true, value } satisfies Answer, value instanceof Uint8Array ? [value.buffer as ArrayBuffer] : []);
      // Closed: the thread ends on its own once the answer is out (its exit handlers run).
      if (request.op === "close") port.close();
    },
    (err: unknown) => port.postMessage({ id: request.id, ok: false, error: toWireError(err) } satisfies Answer),
  );
});
