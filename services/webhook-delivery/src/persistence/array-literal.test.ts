import { dateArray, plainArray, textArray } from "./array-literal";

describe("array literals", () => {
  it("writes plain elements as they are, null as NULL", () => {
    expect(plainArray([])).toBe("{}");
    expect(plainArray(["0190a1b2-0000-7000-8000-000000000001", null])).toBe("{0190a1b2-0000-7000-8000-000000000001,NULL}");
    expect(plainArray([200, 0, -1])).toBe("{200,0,-1}");
    expect(plainArray([true, false])).toBe("{true,false}");
  });

  it("writes instants in UTC, formatting a shared Date once, and null as NULL", () => {
    const lease = new Date("2026-11-27T00:30:00.123Z");
    expect(dateArray([lease, null, lease, new Date(0)])).toBe("{2026-11-27T00:30:00.123Z,NULL,2026-11-27T00:30:00.123Z,1970-01-01T00:00:00.000Z}");
  });

  it("quotes every text, escapes backslashes and double quotes, and keeps the text NULL apart from null", () => {
    expect(textArray(["", "ok", null, "NULL", 'say "hi"', "a\\b", "{,}", "é 😀"])).toBe('{"","ok",NULL,"NULL","say \\"hi\\"","a\\\\b","{,}","é 😀"}');
  });
});
