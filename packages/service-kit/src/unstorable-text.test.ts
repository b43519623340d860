import { unstorableTextDetails, NUL_MESSAGE } from "./unstorable-text";

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
