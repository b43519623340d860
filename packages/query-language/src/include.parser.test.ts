import { AppError } from "@crm/errors";
import { parseInclude, toPrismaInclude } from "./include.parser";
import { testSpec, thrownBy } from "./query-spec.fixture";

describe("parseInclude", () => {
  const accepted: Array<[string, string | undefined, string[]]> = [
    ["defaults when absent", undefined, ["contacts"]],
    ["adding keeps the defaults", "invoices", ["contacts", "invoices"]],
    ["naming a default is harmless", "contacts", ["contacts"]],
    ["removing a default", "-contacts", []],
    ["removing a default and adding another", "-contacts,invoices", ["invoices"]],
    ["removing a known non-default is harmless", "-invoices", ["contacts"]],
    ["several additions, in order", "quotes,invoices", ["contacts", "quotes", "invoices"]],
    ["duplicates are removed", "invoices,invoices,contacts", ["contacts", "invoices"]],
    ["adding wins over removing (defaults minus removed plus added)", "contacts,-contacts", ["contacts"]],
    ["a relation both added and removed stays", "-invoices,invoices", ["contacts", "invoices"]],
  ];

  it.each(accepted)("%s: %s", (_name, input, expected) => {
    expect(parseInclude(input, testSpec)).toEqual(expected);
  });

  const rejected: Array<[string, string, RegExp]> = [
    ["empty string", "", /empty include element/],
    ["unknown relation", "payments", /unknown relation "payments"/],
    ["removing an unknown relation", "-payments", /unknown relation "payments"/],
    ["a lone minus", "-", /empty include element/],
    ["double minus", "--contacts", /unknown relation "-contacts"/],
    ["trailing comma", "invoices,", /empty include element/],
    ["leading comma", ",invoices", /empty include element/],
    ["names are case-sensitive", "Invoices", /unknown relation/],
    ["inherited property name", "constructor", /unknown relation/],
    ["whitespace is not trimmed", "contacts, invoices", /unknown relation " invoices"/],
    ["a scalar field is not a relation", "firstName", /unknown relation/],
  ];

  it.each(rejected)("%s: %s -> 400019", (_name, input, reason) => {
    const error = thrownBy(() => parseInclude(input, testSpec));
    expect(error).toBeInstanceOf(AppError);
    expect((error as AppError).code).toBe(400019);
    expect((error as AppError).details).toEqual([{ path: "include", message: String((error as AppError).cause) }]);
    expect(String((error as AppError).cause)).toMatch(reason);
  });

  it("names the relations there are beside one that is not, and the position of an empty element", () => {
    expect((thrownBy(() => parseInclude("bogus", testSpec)) as AppError).details).toEqual([
      { path: "include", message: 'unknown relation "bogus" (relations: contacts, invoices, quotes)' },
    ]);
    expect((thrownBy(() => parseInclude("invoices,,quotes", testSpec)) as AppError).details).toEqual([{ path: "include", message: "empty include element at position 2" }]);
  });

  it("rejects a repeated parameter (array) with 400019", () => {
    const error = thrownBy(() => parseInclude(["invoices", "quotes"] as unknown as string, testSpec));
    expect((error as AppError).code).toBe(400019);
  });

  it("an entity without relations includes nothing by default", () => {
    expect(parseInclude(undefined, { fields: testSpec.fields, relations: {} })).toEqual([]);
  });
});

describe("toPrismaInclude", () => {
  it("turns names into a Prisma include argument", () => {
    expect(toPrismaInclude(["contacts", "invoices"])).toEqual({ contacts: true, invoices: true });
    expect(toPrismaInclude([])).toEqual({});
  });
});
