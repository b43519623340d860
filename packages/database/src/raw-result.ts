// A statement's answer kept as PostgreSQL's protocol bytes, and parsed into PGlite's Results later,
// possibly on another thread.
//
// Why: in embedded mode PGlite's thread is the product's ceiling, and a quarter of its time was not
// PostgreSQL's: PGlite parsing the protocol into messages and rows (~7% of the thread), the structured
// clone of those rows to the main thread (~3%), garbage (~3%). The thread now hands over the bytes
// (one transferred buffer) and the main thread, which had time to spare, parses them with PGlite's own
// parser, so callers see exactly the Results PGlite's `query` builds (docs/performance.md, "Fifteenth
// round").
import { type PGlite, parse, type Results, protocol, types } from "@electric-sql/pglite";

type Parsers = NonNullable<NonNullable<Parameters<PGlite["query"]>[2]>["parsers"]>;
type ArrayElementParser = Parameters<typeof types.arrayParser>[1];
type Message = Parameters<Parameters<InstanceType<typeof protocol.Parser>["parse"]>[1]>[0];

// Backend message types (the protocol's first byte).
const ERROR_RESPONSE = 0x45; // 'E'
const ROW_DESCRIPTION = 0x54; // 'T'

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
  return parse.parseResults(parseMessages(bytes) as never, parsers as never, rowMode ? { rowMode } : undefined)[0] as Results<T>;
}
