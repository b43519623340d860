import { AppError } from "@crm/errors";
import { paginationMeta, parsePagination } from "./pagination.parser";
import { thrownBy } from "./query-spec.fixture";

describe("parsePagination", () => {
  const accepted: Array<[string, Record<string, unknown>, { page: number; perPage: number; skip: number; take: number }]> = [
    ["defaults", {}, { page: 1, perPage: 10, skip: 0, take: 10 }],
    ["page and perPage", { page: "3", perPage: "20" }, { page: 3, perPage: 20, skip: 40, take: 20 }],
    ["perPage at the maximum", { perPage: "100" }, { page: 1, perPage: 100, skip: 0, take: 100 }],
    ["perPage above the maximum is capped", { page: "2", perPage: "500" }, { page: 2, perPage: 100, skip: 100, take: 100 }],
    ["an enormous perPage is capped", { perPage: "99999999999999999999999" }, { page: 1, perPage: 100, skip: 0, take: 100 }],
    ["perPage 1", { perPage: "1" }, { page: 1, perPage: 1, skip: 0, take: 1 }],
    ["leading zeros", { page: "02" }, { page: 2, perPage: 10, skip: 10, take: 10 }],
    ["numbers, when called from code", { page: 2, perPage: 5 }, { page: 2, perPage: 5, skip: 5, take: 5 }],
  ];

  it.each(accepted)("%s", (_name, query, expected) => {
    expect(parsePagination(query)).toEqual(expected);
  });

  const rejected: Array<[string, Record<string, unknown>, string[]]> = [
    ["page 0", { page: "0" }, ["page"]],
    ["negative page", { page: "-1" }, ["page"]],
    ["fractional page", { page: "1.5" }, ["page"]],
    ["word page", { page: "abc" }, ["page"]],
    ["empty page", { page: "" }, ["page"]],
    ["page with a plus sign", { page: "+1" }, ["page"]],
    ["page with an exponent", { page: "1e2" }, ["page"]],
    ["page with spaces", { page: " 1" }, ["page"]],
    ["repeated page (array)", { page: ["1", "2"] }, ["page"]],
    ["page too large to represent", { page: "99999999999999999999" }, ["page"]],
    ["perPage 0", { perPage: "0" }, ["perPage"]],
    ["fractional perPage", { perPage: "1.5" }, ["perPage"]],
    ["empty perPage", { perPage: "" }, ["perPage"]],
    ["repeated perPage (array)", { perPage: ["10", "20"] }, ["perPage"]],
    ["fractional number perPage", { perPage: 2.5 }, ["perPage"]],
    ["both invalid: one detail each", { page: "x", perPage: "-5" }, ["page", "perPage"]],
  ];

  it.each(rejected)("%s -> 400001", (_name, query, paths) => {
    const error = thrownBy(() => parsePagination(query));
    expect(error).toBeInstanceOf(AppError);
    expect((error as AppError).code).toBe(400001);
    expect((error as AppError).details?.map((d) => d.path)).toEqual(paths);
  });
});

describe("paginationMeta", () => {
  it.each([
    ["23 records, first page", 23, 1, 10, { total: 23, lastPage: 3, currentPage: 1, perPage: 10, prev: null, next: 2 }],
    ["23 records, middle page", 23, 2, 10, { total: 23, lastPage: 3, currentPage: 2, perPage: 10, prev: 1, next: 3 }],
    ["23 records, last page", 23, 3, 10, { total: 23, lastPage: 3, currentPage: 3, perPage: 10, prev: 2, next: null }],
    ["23 records, past the end", 23, 4, 10, { total: 23, lastPage: 3, currentPage: 4, perPage: 10, prev: 3, next: null }],
    ["exact multiple", 20, 1, 10, { total: 20, lastPage: 2, currentPage: 1, perPage: 10, prev: null, next: 2 }],
    ["no records", 0, 1, 10, { total: 0, lastPage: 0, currentPage: 1, perPage: 10, prev: null, next: null }],
    ["no records, page 2", 0, 2, 10, { total: 0, lastPage: 0, currentPage: 2, perPage: 10, prev: 1, next: null }],
  ])("%s", (_name, total, page, perPage, expected) => {
    expect(paginationMeta(total, page, perPage)).toEqual(expected);
  });
});
