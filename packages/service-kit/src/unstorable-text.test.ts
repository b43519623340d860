import { LONE_SURROGATE_MESSAGE, NUL_MESSAGE, unstorableTextDetails } from "./unstorable-text";

describe("unstorableTextDetails", () => {
  it("finds nothing in text without NUL", () => {
    expect(unstorableTextDetails({ a: "x", b: [1, "y", { c: null, d: true }], e: "\u0001" })).toEqual([]);
    expect(unstorableTextDetails("plain")).toEqual([]);
    expect(unstorableTextDetails(null)).toEqual([]);
  });

  it("names every string holding NUL by its dot-joined path, in document order", () => {
    const body = { firstName: "a\u0000b", items: [{ description: "ok" }, { description: "\u0000" }], tags: ["x", "y\u0000"] };
    expect(unstorableTextDetails(body)).toEqual([
      { path: "firstName", message: NUL_MESSAGE },
      { path: "items.1.description", message: NUL_MESSAGE },
      { path: "tags.1", message: NUL_MESSAGE },
    ]);
    expect(unstorableTextDetails("top\u0000")).toEqual([{ path: "", message: NUL_MESSAGE }]);
  });

  it("names every string or key holding a lone UTF-16 surrogate, and passes paired ones", () => {
    // As JSON.parse makes them from "\\udc00" escapes: the raw body of issue 35 item 5.
    const body = JSON.parse('{"firstName":"a","lastName":"\\udc00","notes":["\\ud83d\\ude00 ok","x\\ud800","\\ud800\\ud800\\udc00"],"k\\udfff":1}');
    // An object's keys are checked as the object is reached, before the values under them.
    expect(unstorableTextDetails(body)).toEqual([
      { path: "k\udfff", message: LONE_SURROGATE_MESSAGE },
      { path: "lastName", message: LONE_SURROGATE_MESSAGE },
      { path: "notes.1", message: LONE_SURROGATE_MESSAGE },
      { path: "notes.2", message: LONE_SURROGATE_MESSAGE },
    ]);
    expect(unstorableTextDetails({ emoji: "😀", cjk: "漢字", bmpEdge: "\uffff\ue000" })).toEqual([]);
  });

  it("names a key holding NUL", () => {
    expect(unstorableTextDetails({ nested: { "bad\u0000key": 1 } })).toEqual([{ path: "nested.bad\u0000key", message: NUL_MESSAGE }]);
  });

  it("reports at most 20 findings", () => {
    expect(unstorableTextDetails(Array.from({ length: 100 }, () => "\u0000"))).toHaveLength(20);
  });

  it("walks a very deep value without exhausting the stack", () => {
    const depth = 300_000;
    const deep = JSON.parse(`${"[".repeat(depth)}"\\u0000"${"]".repeat(depth)}`);
    const [detail] = unstorableTextDetails(deep);
    expect(detail!.path.split(".")).toHaveLength(depth);
  });
});
