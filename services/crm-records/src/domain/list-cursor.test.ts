// The cursor codec's key (issue 39): long text values are held as digests, within a byte budget, the
// record's id never; cursors with held values have a version of their own, every other cursor is
// byte for byte the format before (so replicas of either side read it).
import { CursorCodec, HeldValue, holdLongValues, INLINE_KEY_BYTES, type CursorState } from "./list-cursor";

const BUSINESS = "0193a000-0000-7000-8000-000000000001";
const ID = "0193a000-0000-7000-8000-0000000000aa";
const codec = new CursorCodec("a test secret");
const state = (key: unknown[]): CursorState => ({ businessId: BUSINESS, entity: "client", where: "isActive:true", orderBy: "notes:asc", deleted: "exclude", key });
const versionOf = (cursor: string) => Buffer.from(cursor, "base64url")[0];

describe("holdLongValues", () => {
  it.each([
    ["no text", [1, true, null, ID], []],
    ["short texts", ["Ada", "ada@example.com", ID], []],
    ["a text of exactly the budget (its JSON quotes included)", ["x".repeat(INLINE_KEY_BYTES - 2), ID], []],
    ["one byte over", ["x".repeat(INLINE_KEY_BYTES - 1), ID], [0]],
    ["a longText", ["y".repeat(65_536), ID], [0]],
    ["CJK counted in bytes: 400 characters are 1,202", ["中".repeat(400), ID], [0]],
    ["escapes counted as written: 200 control characters are 1,202", ["\u0001".repeat(200), ID], [0]],
    ["the longest first, until the rest fit", ["a".repeat(600), "b".repeat(900), "c".repeat(300), ID], [1]],
    ["as many as it takes", ["a".repeat(700), "b".repeat(700), "c".repeat(700), ID], [0, 1]],
  ])("%s", (_name, key, held) => {
    const kept = holdLongValues(key, key.length - 1);
    expect(kept.flatMap((value, i) => (value instanceof HeldValue ? [i] : []))).toEqual(held);
    kept.forEach((value, i) => expect(value instanceof HeldValue ? value.holds(key[i]) : value === key[i]).toBe(true));
  });

  it("never holds the id, wherever the order puts it", () => {
    const id = "z".repeat(2_000);
    const kept = holdLongValues([id, "short"], 0);
    expect(kept).toEqual([id, "short"]);
  });

  it("a held value holds only its own text", () => {
    const held = HeldValue.of("é".repeat(5_000));
    expect(held.holds("é".repeat(5_000))).toBe(true);
    for (const other of ["é".repeat(4_999), `${"é".repeat(5_000)} `, "e".repeat(5_000), null, undefined, 5]) expect(held.holds(other)).toBe(false);
  });
});

describe("CursorCodec", () => {
  it("writes a key without held values as before (version 2), and reads it back as it was", () => {
    const cursor = codec.encode(state(["Ada", ID]));
    expect(versionOf(cursor)).toBe(2);
    expect(codec.decode(cursor, BUSINESS, "client").key).toEqual(["Ada", ID]);
  });

  it("writes held values in a version of their own (3), read back as held values, within a few KB", () => {
    const long = "中".repeat(10_000);
    const cursor = codec.encode(state(holdLongValues([long, ID], 1)));
    expect(versionOf(cursor)).toBe(3);
    expect(cursor.length).toBeLessThan(1_000);
    const [held, id] = codec.decode(cursor, BUSINESS, "client").key;
    expect([held instanceof HeldValue && held.holds(long), id]).toEqual([true, ID]);
  });

  it("a cursor's version is bound into its authentication: another version byte is refused (400019)", () => {
    for (const key of [
      ["Ada", ID],
      [HeldValue.of("x".repeat(2_000)), ID],
    ]) {
      const sealed = Buffer.from(codec.encode(state(key)), "base64url");
      sealed[0] = sealed[0] === 2 ? 3 : 2;
      expect(() => codec.decode(sealed.toString("base64url"), BUSINESS, "client")).toThrow(expect.objectContaining({ code: 400019 }));
    }
  });

  it("a cursor with held values is bound to its business and entity like any other (400019)", () => {
    const cursor = codec.encode(state([HeldValue.of("x".repeat(2_000)), ID]));
    expect(() => codec.decode(cursor, "0193a000-0000-7000-8000-000000000002", "client")).toThrow(expect.objectContaining({ code: 400019 }));
    expect(() => codec.decode(cursor, BUSINESS, "product")).toThrow(expect.objectContaining({ code: 400019 }));
  });
});
