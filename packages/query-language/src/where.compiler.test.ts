import { testSpec } from "./query-spec.fixture";
import type { WhereNode } from "./query.types";
import { escapeLike, toPrismaWhere } from "./where.compiler";
import { parseWhere } from "./where.parser";

const compile = (input: string) => toPrismaWhere(parseWhere(input, testSpec), testSpec);
const ci = (op: string, value: string) => ({ [op]: value, mode: "insensitive" });

describe("toPrismaWhere: where -> Prisma arguments", () => {
  const cases: Array<[string, string, Record<string, unknown>]> = [
    ["equality", "firstName:John", { firstName: { equals: "John" } }],
    ["comparison on a decimal keeps the text", "totalAmount:gt:100.10", { totalAmount: { gt: "100.10" } }],
    ["gte on an int", "quantity:gte:3", { quantity: { gte: 3 } }],
    ["lt on a datetime", "createdAt:lt:2024-01-01", { createdAt: { lt: new Date("2024-01-01T00:00:00Z") } }],
    ["lte on a nullable int", "score:lte:9", { score: { lte: 9 } }],
    ["boolean equality", "isActive:false", { isActive: { equals: false } }],
    ["enum equality", "status:PAID", { status: { equals: "PAID" } }],
    ["contains is case-insensitive", "firstName:contains:oh", { firstName: ci("contains", "oh") }],
    ["startsWith is case-insensitive", "firstName:startsWith:Jo", { firstName: ci("startsWith", "Jo") }],
    ["endsWith is case-insensitive", "email:endsWith:.com", { email: ci("endsWith", ".com") }],
    ["LIKE wildcards are matched literally", "notes:contains:100%_off\\", { notes: ci("contains", "100\\%\\_off\\\\") }],
    ["equality needs no LIKE escaping", "notes:100%", { notes: { equals: "100%" } }],
    ["uuid equality, lower-cased", "id:0193A4B2-7C5D-7E8F-9A0B-1C2D3E4F5A6B", { id: { equals: "0193a4b2-7c5d-7e8f-9a0b-1c2d3e4f5a6b" } }],
    ["NOT on a non-nullable uuid", "NOT:businessId:0193a4b2-7c5d-7e8f-9a0b-1c2d3e4f5a6b", { NOT: { businessId: { equals: "0193a4b2-7c5d-7e8f-9a0b-1c2d3e4f5a6b" } } }],
    [
      "NOT on a nullable uuid keeps NULL rows",
      "NOT:clientId:0193A4B2-7C5D-7E8F-9A0B-1C2D3E4F5A6B",
      { OR: [{ clientId: null }, { NOT: { clientId: { equals: "0193a4b2-7c5d-7e8f-9a0b-1c2d3e4f5a6b" } } }] },
    ],
    [
      "NOT of OR over uuids",
      "NOT:OR:[id:0193a4b2-7c5d-7e8f-9a0b-1c2d3e4f5a6b,clientId:0193a4b2-7c5d-7e8f-9a0b-1c2d3e4f5a6b]",
      {
        AND: [
          { NOT: { id: { equals: "0193a4b2-7c5d-7e8f-9a0b-1c2d3e4f5a6b" } } },
          { OR: [{ clientId: null }, { NOT: { clientId: { equals: "0193a4b2-7c5d-7e8f-9a0b-1c2d3e4f5a6b" } } }] },
        ],
      },
    ],
    ["AND", "firstName:A,quantity:2", { AND: [{ firstName: { equals: "A" } }, { quantity: { equals: 2 } }] }],
    ["OR", "OR:[firstName:A,lastName:B]", { OR: [{ firstName: { equals: "A" } }, { lastName: { equals: "B" } }] }],
    ["NOT on a non-nullable field", "NOT:firstName:A", { NOT: { firstName: { equals: "A" } } }],
    ["NOT on a nullable field keeps NULL rows", "NOT:email:a@b.c", { OR: [{ email: null }, { NOT: { email: { equals: "a@b.c" } } }] }],
    ["NOT of an operator on a nullable field", "NOT:discount:gt:5", { OR: [{ discount: null }, { NOT: { discount: { gt: "5" } } }] }],
    ["NOT of contains on a nullable field", "NOT:notes:contains:x", { OR: [{ notes: null }, { NOT: { notes: ci("contains", "x") } }] }],
    ["NOT on a nullable boolean", "NOT:isVip:true", { OR: [{ isVip: null }, { NOT: { isVip: { equals: true } } }] }],
    [
      "NOT of OR becomes AND of negations (De Morgan)",
      "NOT:OR:[firstName:A,email:x]",
      { AND: [{ NOT: { firstName: { equals: "A" } } }, { OR: [{ email: null }, { NOT: { email: { equals: "x" } } }] }] },
    ],
    ["double negation cancels", "NOT:NOT:email:x", { email: { equals: "x" } }],
    ["negation inside a negated OR cancels", "NOT:OR:[NOT:email:x,firstName:A]", { AND: [{ email: { equals: "x" } }, { NOT: { firstName: { equals: "A" } } }] }],
    [
      "OR of NOT and a leaf",
      "OR:[NOT:dueDate:2024-01-01,isActive:true]",
      { OR: [{ OR: [{ dueDate: null }, { NOT: { dueDate: { equals: new Date("2024-01-01T00:00:00Z") } } }] }, { isActive: { equals: true } }] },
    ],
  ];

  it.each(cases)("%s: %s", (_name, input, expected) => {
    expect(compile(input)).toEqual(expected);
  });

  it("returns {} when there is no filter", () => {
    expect(toPrismaWhere(undefined, testSpec)).toEqual({});
  });

  it("dates become Date objects", () => {
    const where = compile("createdAt:gte:2024-05-06T07:08:09Z") as { createdAt: { gte: unknown } };
    expect(where.createdAt.gte).toBeInstanceOf(Date);
  });

  it("pushes negation through a hand-built AND (NOT of AND is OR of negations)", () => {
    const node: WhereNode = {
      kind: "not",
      condition: {
        kind: "and",
        conditions: [
          { kind: "condition", field: "firstName", operator: "equals", value: "A" },
          { kind: "condition", field: "score", operator: "gt", value: 1 },
        ],
      },
    };
    expect(toPrismaWhere(node, testSpec)).toEqual({
      OR: [{ NOT: { firstName: { equals: "A" } } }, { OR: [{ score: null }, { NOT: { score: { gt: 1 } } }] }],
    });
  });

  it("treats a field missing from the spec as nullable", () => {
    const node: WhereNode = { kind: "not", condition: { kind: "condition", field: "other", operator: "equals", value: "x" } };
    expect(toPrismaWhere(node, testSpec)).toEqual({ OR: [{ other: null }, { NOT: { other: { equals: "x" } } }] });
  });

  it("escapeLike escapes only %, _ and backslash", () => {
    expect(escapeLike("a%b_c\\d*e?")).toBe("a\\%b\\_c\\\\d*e?");
  });
});
