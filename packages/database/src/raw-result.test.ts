import { types } from "@electric-sql/pglite";
import { decodeResult, parseRawResult, parseWithPglite } from "./raw-result";

// Backend messages built by hand, for answers a test database does not give on demand.
const utf8 = new TextEncoder();

function message(type: string, ...parts: Uint8Array[]): Uint8Array {
  const length = parts.reduce((sum, part) => sum + part.length, 4);
  const out = new Uint8Array(1 + length);
  out[0] = type.charCodeAt(0);
  new DataView(out.buffer).setInt32(1, length);
  let offset = 5;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.length;
  }
  return out;
}

function int(value: number, bytes: 2 | 4): Uint8Array {
  const out = new Uint8Array(bytes);
  if (bytes === 2) new DataView(out.buffer).setInt16(0, value);
  else new DataView(out.buffer).setInt32(0, value);
  return out;
}

const cstring = (text: string) => utf8.encode(`${text}\0`);

function rowDescription(...columns: Array<[name: string, typeId: number, format?: number]>): Uint8Array {
  const parts = columns.flatMap(([name, typeId, format = 0]) => [cstring(name), int(0, 4), int(0, 2), int(typeId, 4), int(-1, 2), int(-1, 4), int(format, 2)]);
  return message("T", int(columns.length, 2), ...parts);
}

function dataRow(...values: Array<Uint8Array | string | null>): Uint8Array {
  const parts = values.flatMap((value) => {
    if (value === null) return [int(-1, 4)];
    const bytes = typeof value === "string" ? utf8.encode(value) : value;
    return [int(bytes.length, 4), bytes];
  });
  return message("D", int(values.length, 2), ...parts);
}

const bindComplete = message("2");
const commandComplete = (tag: string) => message("C", cstring(tag));
const readyForQuery = message("Z", utf8.encode("I"));
const notice = message("N", utf8.encode("SNOTICE\0C00000\0Mnoticed\0\0"));

function answer(...messages: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(messages.reduce((sum, m) => sum + m.length, 0));
  let offset = 0;
  for (const m of messages) {
    out.set(m, offset);
    offset += m.length;
  }
  return out;
}

/** A call's value, or the error it threw (PGlite's parser throws a TypeError on some answers; so must this). */
function outcome(run: () => unknown): { value: unknown } | { error: unknown } {
  try {
    return { value: run() };
  } catch (error) {
    return { error };
  }
}

const parsers = { ...types.parsers } as Parameters<typeof parseRawResult>[1];
const BOM = new Uint8Array([0xef, 0xbb, 0xbf]);

describe("parseRawResult", () => {
  it.each([
    {
      name: "text with a byte order mark, multi-byte and invalid UTF-8, empty and one-byte values",
      bytes: answer(
        rowDescription(["t", 25], ["b", 16], ["n", 23]),
        bindComplete,
        dataRow(new Uint8Array([...BOM, 0x61]), "t", "7"),
        dataRow(new Uint8Array([0xe2, 0x98, 0x83, 0xff, 0xc3]), "f", ""),
        dataRow("", null, "é"),
        commandComplete("SELECT 3"),
        readyForQuery,
      ),
      decoded: true,
    },
    {
      name: "notices before and after the rows",
      bytes: answer(notice, rowDescription(["id", 23]), bindComplete, notice, dataRow("1"), commandComplete("SELECT 1"), notice, readyForQuery),
      decoded: true,
    },
    { name: "no rows: a command tag without a count", bytes: answer(bindComplete, commandComplete("CREATE TABLE"), readyForQuery), decoded: true },
    { name: "an INSERT's count", bytes: answer(bindComplete, commandComplete("INSERT 0 5"), readyForQuery), decoded: true },
    { name: "no ReadyForQuery", bytes: answer(rowDescription(["id", 23]), dataRow("1"), commandComplete("SELECT 1")), decoded: true },
    { name: "an empty query", bytes: answer(bindComplete, message("I"), readyForQuery), decoded: false },
    { name: "a binary column", bytes: answer(rowDescription(["id", 23, 1]), dataRow("1"), commandComplete("SELECT 1"), readyForQuery), decoded: false },
    { name: "a row without a description", bytes: answer(bindComplete, dataRow("1"), commandComplete("SELECT 1"), readyForQuery), decoded: false },
    { name: "a row with more values than columns", bytes: answer(rowDescription(["id", 23]), dataRow("1", "2"), commandComplete("SELECT 1"), readyForQuery), decoded: false },
    {
      name: "a second description",
      bytes: answer(rowDescription(["id", 23]), rowDescription(["name", 25]), dataRow("x"), commandComplete("SELECT 1"), readyForQuery),
      decoded: false,
    },
    {
      name: "rows after the command's completion",
      bytes: answer(rowDescription(["id", 23]), commandComplete("SELECT 0"), dataRow("1"), commandComplete("SELECT 1"), readyForQuery),
      decoded: false,
    },
    { name: "a parameter status", bytes: answer(bindComplete, commandComplete("SET"), message("S", cstring("application_name"), cstring("x")), readyForQuery), decoded: false },
    { name: "a truncated message", bytes: answer(rowDescription(["id", 23]), dataRow("1"), commandComplete("SELECT 1")).subarray(0, -2), decoded: false },
  ])("$name: the Results (or error) PGlite's parser makes; read without it: $decoded", ({ bytes, decoded }) => {
    for (const rowMode of [undefined, "array", "object"] as const) {
      expect(outcome(() => parseRawResult(bytes, parsers, rowMode))).toStrictEqual(outcome(() => parseWithPglite(bytes, parsers, rowMode)));
      expect(decodeResult(bytes, parsers, rowMode) !== undefined).toBe(decoded);
    }
  });

  it("leaves an object row with a column named __proto__ to PGlite's parser (an array row is read as usual)", () => {
    const bytes = answer(rowDescription(["__proto__", 25], ["id", 23]), dataRow("x", "1"), commandComplete("SELECT 1"), readyForQuery);
    expect(decodeResult(bytes, parsers, "object")).toBeUndefined();
    expect(decodeResult(bytes, parsers, "array")).toStrictEqual(parseWithPglite(bytes, parsers, "array"));
    const [row] = parseRawResult<Record<string, unknown>>(bytes, parsers, "object").rows;
    expect(Object.getOwnPropertyDescriptor(row, "__proto__")?.value).toBe("x");
    expect(Object.getPrototypeOf(row)).toBe(Object.prototype);
  });
});
