import { AppError } from "@crm/errors";
import { parseOrderBy, toPrismaOrderBy } from "./order-by.parser";
import { testSpec, thrownBy } from "./query-spec.fixture";
import type { OrderTerm } from "./query.types";

const asc = (field: string): OrderTerm => ({ field, direction: "asc" });
const desc = (field: string): OrderTerm => ({ field, direction: "desc" });

describe("parseOrderBy", () => {
  const accepted: Array<[string, string | undefined, OrderTerm[]]> = [
    ["default when absent", undefined, [desc("createdAt"), desc("id")]],
    ["one pair gets the id tie-breaker in its direction", "firstName:asc", [asc("firstName"), asc("id")]],
    ["id takes the direction of the last pair", "firstName:asc,createdAt:desc", [asc("firstName"), desc("createdAt"), desc("id")]],
    ["id takes asc from the last pair", "totalAmount:desc,lastName:asc", [desc("totalAmount"), asc("lastName"), asc("id")]],
    ["explicit id is not repeated", "id:asc", [asc("id")]],
    ["explicit id in the middle is not repeated", "id:desc,firstName:asc", [desc("id"), asc("firstName")]],
    ["any scalar field sorts, nullable too", "dueDate:asc", [asc("dueDate"), asc("id")]],
    ["uuid fields sort, nullable too", "clientId:asc,businessId:desc", [asc("clientId"), desc("businessId"), desc("id")]],
    ["enum and boolean fields sort", "status:desc,isActive:asc", [desc("status"), asc("isActive"), asc("id")]],
  ];

  it.each(accepted)("%s: %s", (_name, input, expected) => {
    expect(parseOrderBy(input, testSpec)).toEqual(expected);
  });

  it("returns a fresh default each time (callers may mutate it)", () => {
    const first = parseOrderBy(undefined, testSpec);
    first.push(asc("x"));
    expect(parseOrderBy(undefined, testSpec)).toEqual([desc("createdAt"), desc("id")]);
  });

  const rejected: Array<[string, string, RegExp]> = [
    ["empty string", "", /empty orderBy pair/],
    ["field without a direction", "firstName", /not field:direction/],
    ["empty direction", "firstName:", /unknown direction ""/],
    ["empty field", ":asc", /unknown sort field ""/],
    ["upper-case direction", "firstName:ASC", /unknown direction "ASC"/],
    ["unknown direction", "firstName:up", /unknown direction "up"/],
    ["unknown field", "nickname:asc", /unknown sort field "nickname"/],
    ["inherited property name", "constructor:asc", /unknown sort field/],
    ["empty pair in the middle", "firstName:asc,,lastName:desc", /empty orderBy pair/],
    ["trailing comma", "firstName:asc,", /empty orderBy pair/],
    ["leading comma", ",firstName:asc", /empty orderBy pair/],
    ["three segments", "firstName:asc:desc", /not field:direction/],
    ["the same field twice", "firstName:asc,firstName:desc", /sorted on twice/],
    ["whitespace is not trimmed", "firstName: asc", /unknown direction/],
    ["spaces around the comma", "firstName:asc, lastName:asc", /unknown sort field " lastName"/],
  ];

  it.each(rejected)("%s: %s -> 400011", (_name, input, reason) => {
    const error = thrownBy(() => parseOrderBy(input, testSpec));
    expect(error).toBeInstanceOf(AppError);
    expect((error as AppError).code).toBe(400011);
    expect((error as AppError).details).toEqual([{ path: "orderBy", message: String((error as AppError).cause) }]);
    expect(String((error as AppError).cause)).toMatch(reason);
  });

  it("names the field and the pair's position", () => {
    expect((thrownBy(() => parseOrderBy("firstName:asc,nickname:desc", testSpec)) as AppError).details).toEqual([
      { path: "orderBy", message: 'unknown sort field "nickname" (pair 2)' },
    ]);
    expect((thrownBy(() => parseOrderBy("firstName:up", testSpec)) as AppError).details).toEqual([
      { path: "orderBy", message: 'unknown direction "up" for "firstName": asc or desc (pair 1)' },
    ]);
  });

  it("refuses a field its spec marks unsortable (a custom multiSelect), with 400011", () => {
    const spec = { ...testSpec, fields: { ...testSpec.fields, "customFields.tags": { type: "enum" as const, nullable: true, enumValues: ["a"], sortable: false } } };
    expect((thrownBy(() => parseOrderBy("customFields.tags:asc", spec)) as AppError).details).toEqual([
      { path: "orderBy", message: 'field "customFields.tags" cannot be sorted on (pair 1)' },
    ]);
  });

  it("rejects a repeated parameter (array) with 400011", () => {
    const error = thrownBy(() => parseOrderBy(["firstName:asc", "id:asc"] as unknown as string, testSpec));
    expect((error as AppError).code).toBe(400011);
    expect((error as AppError).toBody()).toEqual({
      success: false,
      error: { code: 400011, message: "Invalid sorting order", details: [{ path: "orderBy", message: "orderBy must be given once, as one string" }] },
    });
  });
});

describe("toPrismaOrderBy", () => {
  it("maps each term to a one-key object, in order", () => {
    expect(toPrismaOrderBy([asc("firstName"), desc("createdAt"), desc("id")])).toEqual([{ firstName: "asc" }, { createdAt: "desc" }, { id: "desc" }]);
  });
});
