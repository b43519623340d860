import { AppError } from "@crm/errors";
import { parseListQuery } from "./list-query.parser";
import { testSpec, thrownBy } from "./query-spec.fixture";

describe("parseListQuery", () => {
  it("applies every default", () => {
    expect(parseListQuery({}, testSpec)).toEqual({
      page: 1,
      perPage: 10,
      skip: 0,
      take: 10,
      where: undefined,
      orderBy: [
        { field: "createdAt", direction: "desc" },
        { field: "id", direction: "desc" },
      ],
      include: ["contacts"],
    });
  });

  it("parses every parameter", () => {
    const query = { page: "2", perPage: "5", where: "isActive:true", orderBy: "lastName:asc", include: "-contacts,invoices", other: "ignored" };
    expect(parseListQuery(query, testSpec)).toEqual({
      page: 2,
      perPage: 5,
      skip: 5,
      take: 5,
      where: { kind: "condition", field: "isActive", operator: "equals", value: true },
      orderBy: [
        { field: "lastName", direction: "asc" },
        { field: "id", direction: "asc" },
      ],
      include: ["invoices"],
    });
  });

  it.each([
    ["repeated where", { where: ["a:b", "c:d"] }, 400019],
    ["bracketed where (object)", { where: { a: "b" } }, 400019],
    ["empty where", { where: "" }, 400019],
    ["invalid where", { where: "nickname:x" }, 400019],
    ["repeated orderBy", { orderBy: ["firstName:asc", "id:asc"] }, 400011],
    ["empty orderBy", { orderBy: "" }, 400011],
    ["invalid orderBy", { orderBy: "firstName" }, 400011],
    ["repeated include", { include: ["invoices", "quotes"] }, 400019],
    ["empty include", { include: "" }, 400019],
    ["invalid include", { include: "payments" }, 400019],
    ["invalid page", { page: "0" }, 400001],
    // Fixed order of checks: pagination, then where, then orderBy, then include.
    ["pagination is checked first", { page: "0", where: "nickname:x", orderBy: "x" }, 400001],
    ["where is checked before orderBy", { where: "nickname:x", orderBy: "x" }, 400019],
    ["orderBy is checked before include", { orderBy: "x", include: "payments" }, 400011],
  ])("%s -> %d", (_name, query, code) => {
    const error = thrownBy(() => parseListQuery(query as Record<string, unknown>, testSpec));
    expect(error).toBeInstanceOf(AppError);
    expect((error as AppError).code).toBe(code);
  });
});
