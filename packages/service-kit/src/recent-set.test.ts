import { RecentSet } from "./recent-set";

describe("RecentSet", () => {
  it("remembers a digest until it expires or is deleted", () => {
    let now = 0;
    const keys = new RecentSet(1000, 10, () => now);
    keys.add("a");
    expect(keys.has("a")).toBe(true);
    now = 999;
    expect(keys.has("a")).toBe(true);
    now = 1000;
    expect(keys.has("a")).toBe(false);
    keys.add("b");
    keys.delete("b");
    expect(keys.has("b")).toBe(false);
  });

  it("holds at most maxEntries, dropping the least recently added", () => {
    const keys = new RecentSet(60_000, 3);
    for (const d of ["a", "b", "c"]) keys.add(d);
    keys.add("a"); // refreshed: now the newest
    keys.add("d");
    expect(["a", "b", "c", "d"].filter((d) => keys.has(d))).toEqual(["a", "c", "d"]);
  });
});
