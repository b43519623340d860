// The record evaluator, case by case: a filter over one JSON record as GET returns it (timestamps
// as ISO text, amounts as JSON numbers), with the list's meaning. Both sides of every case: a
// filter that matches nothing by mistake is as wrong as one that matches everything.
import { testSpec } from "./query-spec.fixture";
import { compareDecimal, matchesWhere } from "./where.evaluator";
import { parseWhere } from "./where.parser";

const record = {
  id: "0193a4b2-7c5d-7e8f-9a0b-1c2d3e4f5a6b",
  firstName: "Zoë",
  lastName: "O'Brien, Jr.",
  email: null,
  isActive: true,
  status: "PAID",
  totalAmount: 100.5,
  quantity: 3,
  createdAt: "2026-01-31T12:00:00.000Z",
  dueDate: null,
};

describe("matchesWhere", () => {
  it.each([
    // equality: exact and case-sensitive
    ["firstName:Zoë", true],
    ["firstName:zoë", false],
    ['lastName:"O\'Brien, Jr."', true],
    ["status:PAID", true],
    ["status:SENT", false],
    ["isActive:true", true],
    ["isActive:bool(false)", false],
    ["id:0193A4B2-7C5D-7E8F-9A0B-1C2D3E4F5A6B", true],
    ["id:00000000-0000-0000-0000-000000000000", false],
    // string operators: case-insensitive, literal
    ["firstName:contains:OË", true],
    ["firstName:startsWith:zo", true],
    ["firstName:endsWith:x", false],
    ['lastName:contains:"n, j"', true],
    ["firstName:contains:%", false],
    // numbers: exact decimals
    ["totalAmount:gt:100", true],
    ["totalAmount:gte:float(100.50)", true],
    ["totalAmount:100.5", true],
    ["totalAmount:lt:100.5", false],
    ["totalAmount:gt:100.50000000000000001", false],
    ["quantity:gte:int(3)", true],
    ["quantity:gt:3", false],
    // dates
    ["createdAt:gte:date(2026-01-31)", true],
    ["createdAt:gt:date(2026-01-31T12:00:00Z)", false],
    ["createdAt:2026-01-31T12:00:00.000Z", true],
    ["createdAt:lt:date(2026-01-01)", false],
    // nulls: no comparison matches, NOT matches
    ["email:x", false],
    ["email:contains:x", false],
    ["NOT:email:x", true],
    ["dueDate:lt:date(2030-01-01)", false],
    ["NOT:dueDate:lt:date(2030-01-01)", true],
    // AND, OR, NOT
    ["status:PAID,isActive:true", true],
    ["status:PAID,isActive:false", false],
    ["OR:[status:SENT,totalAmount:gt:100]", true],
    ["OR:[status:SENT,totalAmount:gt:1000]", false],
    ["NOT:OR:[status:SENT,status:VOID]", true],
    ["NOT:status:PAID", false],
  ])("%s -> %s", (where, expected) => {
    expect(matchesWhere(parseWhere(where, testSpec), record, testSpec)).toBe(expected);
  });

  it("a field the record does not carry compares like a null one", () => {
    expect(matchesWhere(parseWhere("notes:x", testSpec), {}, testSpec)).toBe(false);
    expect(matchesWhere(parseWhere("NOT:notes:x", testSpec), {}, testSpec)).toBe(true);
  });

  it("a cell of the wrong type matches nothing instead of throwing", () => {
    expect(matchesWhere(parseWhere("totalAmount:gt:1", testSpec), { totalAmount: { nested: 1 } }, testSpec)).toBe(false);
    expect(matchesWhere(parseWhere("createdAt:gt:date(2020-01-01)", testSpec), { createdAt: "not a date" }, testSpec)).toBe(false);
    expect(matchesWhere(parseWhere("isActive:true", testSpec), { isActive: "true" }, testSpec)).toBe(false);
  });
});

describe("compareDecimal", () => {
  it.each([
    ["1", "1.0", 0],
    ["0.3", "0.30000000000000001", -1],
    ["-0", "0", 0],
    ["-1.5", "-1.25", -1],
    ["10", "9.9999", 1],
    ["+2", "2", 0],
    ["007.50", "7.5", 0],
    ["1e3", "999", 1],
  ])("%s vs %s -> %d", (a, b, expected) => {
    expect(compareDecimal(a, b)).toBe(expected);
  });
});
