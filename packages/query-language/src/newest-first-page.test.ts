import { newestFirstPage } from "./newest-first-page";

describe("newestFirstPage", () => {
  it("reads the page newest first (id breaking ties) through the given window, and the total", async () => {
    const windows: unknown[] = [];
    const result = await newestFirstPage(
      { page: 3, perPage: 10, skip: 20, take: 10 },
      async (window) => {
        windows.push(window);
        return ["row"];
      },
      async () => 21,
    );
    expect(windows).toEqual([{ orderBy: [{ createdAt: "desc" }, { id: "desc" }], skip: 20, take: 10 }]);
    expect(result).toEqual({ rows: ["row"], total: 21 });
  });
});
