// The plain lists outside the record query language (users, API keys, webhooks, a webhook's deliveries)
// all answer one page newest first with the exact total; the order and the two queries are written here once.
import type { Pagination } from "./pagination.parser";

/** What the page's findMany adds to its `where`: newest first, ties broken by id so pages never overlap. */
export interface NewestFirstWindow {
  orderBy: Array<{ createdAt: "desc" } | { id: "desc" }>;
  skip: number;
  take: number;
}

/** The page's rows and the total, read at once: `rows` gets the window to spread into its findMany. */
export async function newestFirstPage<Row>(
  page: Pagination,
  rows: (window: NewestFirstWindow) => Promise<Row[]>,
  total: () => Promise<number>,
): Promise<{ rows: Row[]; total: number }> {
  const [pageRows, count] = await Promise.all([rows({ orderBy: [{ createdAt: "desc" }, { id: "desc" }], skip: page.skip, take: page.take }), total()]);
  return { rows: pageRows, total: count };
}
