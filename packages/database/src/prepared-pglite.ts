// PGlite whose parameterised queries reuse prepared statements.
//
// Measured (docs/performance.md, "Embedded mode"): PGlite's own `query` sends every statement as an
// unnamed Parse, a Describe of it, then Bind, Describe, Execute and Sync, each its own pass through
// the wasm PostgreSQL main loop, and PostgreSQL parses, analyses and plans the text every time. In
// embedded mode that was half the one process's CPU (1.2 ms per statement, 8 statements per created
// client with a webhook). Here a statement text is parsed and described once, as a named prepared
// statement; each later execution is one pass: Bind (values serialised by the parameter types the
// Describe reported, as PGlite does), Execute, Sync. A micro-benchmark of the create statement:
// 465 -> 211 µs of CPU per call; a select by index: 456 -> 150 µs.
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
    // The bytes as they are: PGlite's execProtocol would also parse them into messages here.
    const answer = new ByteCollector(statement.rowDescription);
    await this.execProtocolRawStream(concat([...this.takeClosing(), serialize.bind({ statement: statement.name, values }), serialize.execute({}), serialize.sync()]), {
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
