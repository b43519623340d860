// A statement's answer kept as PostgreSQL's protocol bytes, and parsed into PGlite's Results later,
// possibly on another thread.
//
// Why: in embedded mode PGlite's thread is the product's ceiling, and a quarter of its time was not
// PostgreSQL's: PGlite parsing the protocol into messages and rows (~7% of the thread), the structured
// clone of those rows to the main thread (~3%), garbage (~3%). The thread now hands over the bytes
// (one transferred buffer) and the main thread, which had time to spare, parses them into exactly the
// Results PGlite's `query` builds (docs/performance.md, D29): the usual answers read in
// place (`decodeResult`), anything else by PGlite's own parser.
import { type PGlite, parse, type Results, protocol, types } from "@electric-sql/pglite";

type Parsers = NonNullable<NonNullable<Parameters<PGlite["query"]>[2]>["parsers"]>;
type ArrayElementParser = Parameters<typeof types.arrayParser>[1];
type Message = Parameters<Parameters<InstanceType<typeof protocol.Parser>["parse"]>[1]>[0];

// Backend message types (the protocol's first byte).
const BIND_COMPLETE = 0x32; // '2'
const COMMAND_COMPLETE = 0x43; // 'C'
const DATA_ROW = 0x44; // 'D'
const ERROR_RESPONSE = 0x45; // 'E'
const NOTICE_RESPONSE = 0x4e; // 'N'
const ROW_DESCRIPTION = 0x54; // 'T'
const READY_FOR_QUERY = 0x5a; // 'Z'

/** The start in `bytes` (a whole number of messages) of the first message of type `type`, or -1. */
function messageOffset(bytes: Uint8Array, type: number): number {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  // Each message: its type byte, then a length that counts itself.
  for (let offset = 0; offset + 5 <= bytes.length; offset += 1 + view.getInt32(offset + 1)) {
    if (bytes[offset] === type) return offset;
  }
  return -1;
}

function messageAt(bytes: Uint8Array, offset: number): Uint8Array {
  const length = new DataView(bytes.buffer, bytes.byteOffset + offset + 1, 4).getInt32(0);
  return bytes.subarray(offset, offset + 1 + length);
}

function parseMessages(bytes: Uint8Array): Message[] {
  const messages: Message[] = [];
  new protocol.Parser().parse(bytes, (message) => messages.push(message));
  return messages;
}

/**
 * The first ErrorResponse in `bytes`, as the DatabaseError PGlite's `execProtocol` throws for it;
 * undefined when there is none. Reads only the messages' headers unless there is one.
 */
export function errorIn(bytes: Uint8Array): Error | undefined {
  const offset = messageOffset(bytes, ERROR_RESPONSE);
  return offset < 0 ? undefined : (parseMessages(messageAt(bytes, offset))[0] as unknown as Error);
}

/** The RowDescription message in `bytes` (a Describe's answer), as bytes; undefined when the statement returns no rows. */
export function rowDescriptionIn(bytes: Uint8Array): Uint8Array | undefined {
  const offset = messageOffset(bytes, ROW_DESCRIPTION);
  return offset < 0 ? undefined : messageAt(bytes, offset).slice();
}

/** Collects what PGlite's wasm writes (views into its memory, so each chunk is copied) into one buffer of its own. */
export class ByteCollector {
  private chunks: Uint8Array[] = [];
  private length = 0;

  constructor(first?: Uint8Array) {
    if (first) this.push(first);
  }

  push(chunk: Uint8Array): void {
    this.chunks.push(chunk.slice());
    this.length += chunk.length;
  }

  /** Everything pushed, in a fresh buffer (it can be transferred to another thread). */
  bytes(): Uint8Array {
    const out = new Uint8Array(this.length);
    let offset = 0;
    for (const chunk of this.chunks) {
      out.set(chunk, offset);
      offset += chunk.length;
    }
    return out;
  }
}

/** PGlite's parsers of this database: its defaults, and one per array type as PGlite adds them at start. */
export function databaseParsers(arrayTypes: ReadonlyArray<{ oid: number; typarray: number }>): Parsers {
  const parsers: Parsers = { ...(types.parsers as Parsers) };
  for (const { oid, typarray } of arrayTypes) parsers[typarray] = (value) => types.arrayParser(value, parsers[oid] as ArrayElementParser, typarray);
  return parsers;
}

/** The array types PGlite registers parsers for when it starts (its `_initArrayTypes` query). */
export const ARRAY_TYPES_QUERY = `
  SELECT b.oid, b.typarray
  FROM pg_catalog.pg_type a
  LEFT JOIN pg_catalog.pg_type b ON b.oid = a.typelem
  WHERE a.typcategory = 'A'
  GROUP BY b.oid, b.typarray
  ORDER BY b.oid`;

/** The Results PGlite's `query` makes of these bytes; `parsers` already holds the caller's own. */
export function parseRawResult<T>(bytes: Uint8Array, parsers: Parsers, rowMode: "array" | "object" | undefined): Results<T> {
  return (decodeResult(bytes, parsers, rowMode) ?? parseWithPglite(bytes, parsers, rowMode)) as Results<T>;
}

/** PGlite's own parser and parseResults: the reference, and the way for anything `decodeResult` does not take. */
export function parseWithPglite<T>(bytes: Uint8Array, parsers: Parsers, rowMode: "array" | "object" | undefined): Results<T> {
  return parse.parseResults(parseMessages(bytes) as never, parsers as never, rowMode ? { rowMode } : undefined)[0] as Results<T>;
}

type Parser = (text: string, typeId: number) => unknown;
interface Field {
  name: string;
  dataTypeID: number;
}

// PGlite's BufferReader decodes with these settings: utf-8, a leading byte order mark dropped, bad bytes replaced.
const decoder = new TextDecoder();
const ONE_BYTE = Array.from({ length: 0x80 }, (_, byte) => String.fromCharCode(byte));
const DEFAULT_PARSERS = types.parsers as unknown as Record<number, Parser | undefined>;

/** The text of bytes[start, end) as PGlite's BufferReader decodes it, without copying the bytes first. */
function text(bytes: Uint8Array, start: number, end: number): string {
  // Single-character values (booleans, small numbers) are common enough to skip the decoder.
  if (end - start === 1 && bytes[start]! < 0x80) return ONE_BYTE[bytes[start]!]!;
  return decoder.decode(bytes.subarray(start, end));
}

/**
 * What PGlite's parser and `parseResults` make of one statement's answer (RowDescription, BindComplete,
 * DataRows, CommandComplete, ReadyForQuery; notices), read in place: PGlite's parser copies every field into
 * an ArrayBuffer of its own before decoding it, and the whole answer before that, which was ~44% of the
 * main thread's parsing (docs/performance.md, D29). Undefined for anything else (another
 * message type, binary columns, a column named __proto__, a row that does not match its description, an
 * answer without a CommandComplete): PGlite's parser takes those, so nothing is guessed.
 */
export function decodeResult(bytes: Uint8Array, parsers: Parsers, rowMode: "array" | "object" | undefined): Results | undefined {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const end = bytes.length;
  const own = parsers as unknown as Record<number, Parser | undefined>;
  const arrays = rowMode === "array";
  let fields: Field[] | undefined;
  let columnParsers: Array<Parser | undefined> = [];
  const rows: unknown[] = [];
  let result: Results | undefined;
  for (let offset = 0; offset < end; ) {
    if (offset + 5 > end) return undefined;
    const type = bytes[offset]!;
    const next = offset + 1 + view.getInt32(offset + 1);
    if (next < offset + 5 || next > end) return undefined;
    let at = offset + 5;
    if (result !== undefined) {
      // The statement's Results are complete; PGlite would read nothing more into them.
      if (type !== READY_FOR_QUERY && type !== NOTICE_RESPONSE) return undefined;
    } else if (type === DATA_ROW) {
      if (fields === undefined) return undefined;
      const count = view.getInt16(at);
      at += 2;
      if (count !== fields.length) return undefined;
      const row: unknown[] | Record<string, unknown> = arrays ? new Array(count) : {};
      for (let i = 0; i < count; i++) {
        const length = view.getInt32(at);
        at += 4;
        let value: unknown = null;
        if (length !== -1) {
          if (length < 0 || at + length > next) return undefined;
          const field = text(bytes, at, at + length);
          at += length;
          const parser = columnParsers[i];
          value = parser ? parser(field, fields[i]!.dataTypeID) : field;
        }
        // Object rows as Object.fromEntries makes them: a repeated name keeps its first place and its last value.
        if (arrays) (row as unknown[])[i] = value;
        else (row as Record<string, unknown>)[fields[i]!.name] = value;
      }
      rows.push(row);
    } else if (type === ROW_DESCRIPTION) {
      if (fields !== undefined) return undefined;
      const count = view.getInt16(at);
      at += 2;
      fields = new Array(count);
      columnParsers = new Array(count);
      for (let i = 0; i < count; i++) {
        const nameEnd = bytes.indexOf(0, at);
        if (nameEnd < 0 || nameEnd + 19 > next) return undefined;
        const name = text(bytes, at, nameEnd);
        at = nameEnd + 1;
        // tableID int32, columnID int16, dataTypeID int32, dataTypeSize int16, dataTypeModifier int32, format int16
        const dataTypeID = view.getInt32(at + 6);
        const format = view.getInt16(at + 16);
        at += 18;
        // PGlite reads binary columns as text; assigning "__proto__" would set the row's prototype.
        if (format !== 0 || (!arrays && name === "__proto__")) return undefined;
        fields[i] = { name, dataTypeID };
        columnParsers[i] = own[dataTypeID] ?? DEFAULT_PARSERS[dataTypeID];
      }
    } else if (type === COMMAND_COMPLETE) {
      const textEnd = bytes.indexOf(0, at);
      if (textEnd < 0 || textEnd >= next) return undefined;
      // As parseResults reads the command tag ("SELECT 2", "INSERT 0 5", "CREATE TABLE").
      const parts = text(bytes, at, textEnd).split(" ");
      const command = parts[0];
      const rowCount = Number.parseInt(parts[parts.length - 1]!, 10);
      const affectedRows = command === "INSERT" || command === "UPDATE" || command === "DELETE" || command === "COPY" || command === "MERGE" ? rowCount : 0;
      result = { rows, fields: fields ?? [], command, affectedRows } as Results;
      if (!Number.isNaN(rowCount)) result.rowCount = rowCount;
    } else if (type !== BIND_COMPLETE && type !== NOTICE_RESPONSE) {
      return undefined;
    }
    offset = next;
  }
  return result;
}
