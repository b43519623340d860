// PGlite whose parameterised queries reuse prepared statements.
//
// Why (docs/performance.md D29): PGlite's own `query` sends every statement as an
// unnamed Parse, a Describe of it, then Bind, Describe, Execute and Sync, each its own pass through
// the wasm PostgreSQL main loop, and PostgreSQL parses, analyses and plans the text every time. In
// embedded mode that was half the one process's CPU. Here a statement text is parsed and described
// once, as a named prepared statement; each later execution is one pass: Bind (values serialised by
// the parameter types the Describe reported, as PGlite does), Execute, Sync, which costs about half
// the CPU per call.
//
// Everything else (exec, transactions, listen, the mutexes that serialise users of the one
// instance) is PGlite's own; results are parsed by PGlite's parser, so callers (Prisma's PGlite
// adapter) see the same rows, fields, affected-row counts and errors. `queryRaw` returns the answer's
// protocol bytes instead, for the main thread to parse (./raw-result.ts); `query` parses them here.
import { messages as pgMessages, PGlite, protocol, type PGliteOptions, type Results, type Transaction } from "@electric-sql/pglite";
import { ByteCollector, errorIn, parseRawResult, rowDescriptionIn } from "./raw-result";

type QueryOptions = Parameters<PGlite["query"]>[2];

interface Prepared {
  name: string;
  /** Parameter type OIDs, as Describe reported them: how each value is serialised. */
  paramTypes: number[];
  /** Describe's RowDescription message, as bytes; none when the statement returns no rows. */
  rowDescription: Uint8Array | undefined;
}

/** A transaction whose statements can also answer as protocol bytes. */
export interface RawTransaction extends Transaction {
  queryRaw(text: string, params?: unknown[], options?: QueryOptions): Promise<Uint8Array>;
}

/** Prepared statements kept at most; the least recently used is closed beyond it. Prisma's `IN`
 * lists make one text per list length, so the number of texts is open-ended. */
export const MAX_PREPARED_STATEMENTS = 500;

// SQLSTATE 0A000 "cached plan must not change result type": a table under a prepared statement
// changed shape (a migration ran). The statement is dropped and prepared again.
const PLAN_CHANGED = "0A000";

const { serialize } = protocol;

// Frontend message types (the protocol's first byte).
const BIND = 0x42; // 'B'
const EXECUTE = 0x45; // 'E'
const SYNC = 0x53; // 'S'
/** The buffer kept for executions; a larger one is made for the one execution that needs it. */
const KEPT_BUFFER_BYTES = 64 * 1024;
const utf8 = new TextEncoder();

/**
 * Bind (text values, text results), Execute and Sync of a prepared statement: the bytes PGlite's
 * `serialize.bind`, `serialize.execute` and `serialize.sync` make, written into one buffer that every
 * execution reuses (PGlite's execProtocol copies its input into PostgreSQL's memory before it returns).
 * PGlite's writers counted each value's UTF-8 length in JavaScript and made five or six ArrayBuffers per
 * execution: 7-50 us on PGlite's thread, the embedded ceiling, against 1-2 (docs/performance.md, D29).
 */
export class ExecutionWriter {
  private buffer = new Uint8Array(4096);

  write(statement: string, values: ReadonlyArray<string | null>): Uint8Array {
    // Fixed parts, the name (ASCII), each value at most 3 bytes per UTF-16 unit.
    let most = 32 + statement.length + 6 * values.length;
    for (const value of values) if (value !== null) most += 3 * value.length;
    if (most > this.buffer.length) {
      const grown = new Uint8Array(Math.max(most, 2 * this.buffer.length));
      if (grown.length <= KEPT_BUFFER_BYTES) this.buffer = grown;
      return ExecutionWriter.fill(grown, statement, values);
    }
    return ExecutionWriter.fill(this.buffer, statement, values);
  }

  private static fill(buffer: Uint8Array, statement: string, values: ReadonlyArray<string | null>): Uint8Array {
    const view = new DataView(buffer.buffer, buffer.byteOffset, buffer.byteLength);
    buffer[0] = BIND;
    let at = 5;
    buffer[at++] = 0; // the unnamed portal
    at += utf8.encodeInto(statement, buffer.subarray(at)).written;
    buffer[at++] = 0;
    // One format code per value (text), as PGlite writes them.
    view.setUint16(at, values.length);
    at += 2;
    buffer.fill(0, at, at + 2 * values.length);
    at += 2 * values.length;
    view.setUint16(at, values.length);
    at += 2;
    for (const value of values) {
      if (value === null) {
        view.setInt32(at, -1);
        at += 4;
      } else {
        const written = utf8.encodeInto(value, buffer.subarray(at + 4)).written;
        view.setInt32(at, written);
        at += 4 + written;
      }
    }
    view.setInt16(at, 0); // no result format codes: every column as text
    at += 2;
    view.setInt32(1, at - 1);
    // Execute the unnamed portal, all rows; then Sync.
    buffer[at] = EXECUTE;
    view.setInt32(at + 1, 9);
    buffer[at + 5] = 0;
    view.setInt32(at + 6, 0);
    buffer[at + 10] = SYNC;
    view.setInt32(at + 11, 4);
    return buffer.subarray(0, at + 15);
  }
}

function concat(parts: readonly Uint8Array[]): Uint8Array {
  let length = 0;
  for (const part of parts) length += part.length;
  const out = new Uint8Array(length);
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.length;
  }
  return out;
}

export class PreparedPGlite extends PGlite {
  private readonly prepared = new Map<string, Prepared>();
  private readonly executions = new ExecutionWriter();
  /** Evicted statements, closed ahead of the next execution. */
  private closing: string[] = [];
  private nextName = 0;

  /** Opens `dataDir` (as `PGlite.create`, which always builds a plain PGlite). */
  static async open(dataDir: string, options: PGliteOptions): Promise<PreparedPGlite> {
    const pglite = new PreparedPGlite(dataDir, options);
    await pglite.waitReady;
    return pglite;
  }

  /** Number of statements currently prepared (for tests). */
  get preparedCount(): number {
    return this.prepared.size;
  }

  override async query<T>(text: string, params?: unknown[], options?: QueryOptions): Promise<Results<T>> {
    return this.parsed<T>(await this.queryRaw(text, params, options), options);
  }

  /** As `query`, but the answer's protocol bytes: the statement's RowDescription (if any), then its rows and completion. */
  async queryRaw(text: string, params?: unknown[], options?: QueryOptions): Promise<Uint8Array> {
    return this._runExclusiveTransaction(() => this.run(text, params ?? [], options, false));
  }

  override async transaction<T>(callback: (tx: RawTransaction) => Promise<T>): Promise<T> {
    return super.transaction((tx) => {
      const queryRaw = async (text: string, params?: unknown[], options?: QueryOptions): Promise<Uint8Array> => {
        if (tx.closed) throw new Error("Transaction is closed");
        return this.run(text, params ?? [], options, true);
      };
      const query = async <R>(text: string, params?: unknown[], options?: QueryOptions): Promise<Results<R>> => this.parsed<R>(await queryRaw(text, params, options), options);
      // Everything else is the transaction PGlite made (its `closed` reads PGlite's own state).
      return callback(Object.create(tx, { query: { value: query }, queryRaw: { value: queryRaw } }) as RawTransaction);
    });
  }

  private parsed<T>(bytes: Uint8Array, options: QueryOptions): Results<T> {
    return parseRawResult<T>(bytes, options?.parsers ? { ...this.parsers, ...options.parsers } : this.parsers, options?.rowMode);
  }

  private run(text: string, params: unknown[], options: QueryOptions, inTransaction: boolean): Promise<Uint8Array> {
    return this._runExclusiveQuery(async () => {
      let result: Uint8Array;
      try {
        result = await this.execute(text, params, options);
      } catch (err) {
        if ((err as { code?: string }).code !== PLAN_CHANGED || !this.forget(text) || inTransaction) throw this.describeError(err, text, params, options);
        try {
          result = await this.execute(text, params, options);
        } catch (again) {
          throw this.describeError(again, text, params, options);
        }
      }
      if (!inTransaction) await this.syncToFs();
      return result;
    });
  }

  private async execute(text: string, params: unknown[], options: QueryOptions): Promise<Uint8Array> {
    const statement = await this.prepare(text, options);
    const serializers = options?.serializers;
    const values = params.map((value, i) => {
      if (value === null || value === undefined) return null;
      const type = statement.paramTypes[i]!;
      const serializer = serializers?.[type] ?? this.serializers[type];
      return serializer ? serializer(value) : String(value);
    });
    // Values a caller's serializer made other than text go through PGlite's own writer.
    const execution = values.every((value) => value === null || typeof value === "string")
      ? this.executions.write(statement.name, values as Array<string | null>)
      : concat([serialize.bind({ statement: statement.name, values }), serialize.execute({}), serialize.sync()]);
    const closing = this.takeClosing();
    // The bytes as they are: PGlite's execProtocol would also parse them into messages here.
    const answer = new ByteCollector(statement.rowDescription);
    await this.execProtocolRawStream(closing.length > 0 ? concat([...closing, execution]) : execution, {
      syncToFs: false,
      onRawData: (chunk) => answer.push(chunk),
    });
    const bytes = answer.bytes();
    // As execProtocol does: the first error is thrown.
    const error = errorIn(bytes);
    if (error) throw error;
    return bytes;
  }

  private async prepare(text: string, options: QueryOptions): Promise<Prepared> {
    const known = this.prepared.get(text);
    if (known) {
      // Most recently used last: eviction takes the first.
      this.prepared.delete(text);
      this.prepared.set(text, known);
      return known;
    }
    const name = `crm_${this.nextName++}`;
    const { messages, data } = await this.execProtocol(
      concat([...this.takeClosing(), serialize.parse({ name, text, types: options?.paramTypes }), serialize.describe({ type: "S", name }), serialize.sync()]),
      { syncToFs: false },
    );
    const parameters = messages.find((m) => m.name === "parameterDescription") as pgMessages.ParameterDescriptionMessage | undefined;
    const statement = { name, paramTypes: parameters?.dataTypeIDs ?? [], rowDescription: rowDescriptionIn(data) };
    this.prepared.set(text, statement);
    if (this.prepared.size > MAX_PREPARED_STATEMENTS) {
      const [oldest] = this.prepared.keys();
      this.forget(oldest!);
    }
    return statement;
  }

  /** Drops `text`'s statement (closed with the next execution); false when none was prepared. */
  private forget(text: string): boolean {
    const statement = this.prepared.get(text);
    if (!statement) return false;
    this.prepared.delete(text);
    this.closing.push(statement.name);
    return true;
  }

  private takeClosing(): Uint8Array[] {
    if (this.closing.length === 0) return [];
    const closes = this.closing.map((name) => serialize.close({ type: "S", name }));
    this.closing = [];
    return closes;
  }

  /** As PGlite's own query does: the error carries the query, its parameters and options. */
  private describeError(err: unknown, query: string, params: unknown[], queryOptions: QueryOptions): unknown {
    if (err instanceof pgMessages.DatabaseError) Object.assign(err, { query, params, queryOptions });
    return err;
  }
}
