import { AppError } from "@crm/errors";
import { testSpec, thrownBy } from "./query-spec.fixture";
import type { ConditionNode, FilterValue, Operator, WhereNode } from "./query.types";
import { parseWhere } from "./where.parser";

const leaf = (field: string, operator: Operator, value: FilterValue): ConditionNode => ({ kind: "condition", field, operator, value });
const eq = (field: string, value: FilterValue) => leaf(field, "equals", value);
const and = (...conditions: WhereNode[]): WhereNode => ({ kind: "and", conditions });
const or = (...conditions: WhereNode[]): WhereNode => ({ kind: "or", conditions });
const not = (condition: WhereNode): WhereNode => ({ kind: "not", condition });
const utc = (iso: string) => new Date(iso);

/** `n` comma-joined leaves, each `firstName:a<i>`. */
const manyLeaves = (n: number) => Array.from({ length: n }, (_, i) => `firstName:a${i}`).join(",");

describe("parseWhere: accepted input -> AST", () => {
  const cases: Array<[string, string, WhereNode]> = [
    // Equality and the operator form
    ["equality", "firstName:John", eq("firstName", "John")],
    ["gt on a string field", "firstName:gt:M", leaf("firstName", "gt", "M")],
    ["gte on an int field", "quantity:gte:5", leaf("quantity", "gte", 5)],
    ["lt on an int field", "quantity:lt:5", leaf("quantity", "lt", 5)],
    ["lte on a nullable int field", "score:lte:-3", leaf("score", "lte", -3)],
    ["contains", "firstName:contains:oh", leaf("firstName", "contains", "oh")],
    ["startsWith", "firstName:startsWith:Jo", leaf("firstName", "startsWith", "Jo")],
    ["endsWith", "email:endsWith:@example.com", leaf("email", "endsWith", "@example.com")],
    // Field = up to the first colon; operator only when exactly one of the seven names
    ["value keeps its colons", "notes:https://x.test/a?b=c", eq("notes", "https://x.test/a?b=c")],
    ["non-operator segment stays in the value", "notes:foo:bar", eq("notes", "foo:bar")],
    ["operator then a value with colons", "notes:contains:a:b", leaf("notes", "contains", "a:b")],
    ["operator names are case-sensitive", "notes:Contains:x", eq("notes", "Contains:x")],
    ["an operator name with no value after it is the value", "notes:gt", eq("notes", "gt")],
    ["only the first segment can be the operator", "notes:gt:lt:5", leaf("notes", "gt", "lt:5")],
    ["an operator-like prefix of a longer word is not an operator", "notes:gtx:1", eq("notes", "gtx:1")],
    ["date-time with colons after an operator", "createdAt:gte:2024-01-01T10:00:00Z", leaf("createdAt", "gte", utc("2024-01-01T10:00:00Z"))],
    // Quoting
    ["quoted value with a comma", 'notes:"a,b"', eq("notes", "a,b")],
    ["quoted value with brackets", 'notes:"[x]"', eq("notes", "[x]")],
    ["quoted value with escaped quotes", 'notes:"say \\"hi\\""', eq("notes", 'say "hi"')],
    ["quoted value with an escaped backslash", 'notes:"back\\\\slash"', eq("notes", "back\\slash")],
    ["quoted value that starts with a quote", 'notes:"\\"quoted\\""', eq("notes", '"quoted"')],
    ["empty quoted value", 'notes:""', eq("notes", "")],
    ["quoted value after an operator", 'notes:contains:"a,b"', leaf("notes", "contains", "a,b")],
    ["quoting hides an operator-like prefix", 'notes:"gt:5"', eq("notes", "gt:5")],
    ["quoting makes a cast a plain string", 'notes:"int(5)"', eq("notes", "int(5)")],
    ["a quote that is not leading is literal", 'notes:a"b', eq("notes", 'a"b')],
    ["a trailing quote is literal", 'notes:ab"', eq("notes", 'ab"')],
    ["an unescaped backslash outside quotes is literal", "notes:a\\b", eq("notes", "a\\b")],
    ["quoted value on a decimal field", 'totalAmount:"100.5"', eq("totalAmount", "100.5")],
    ["quoted value inside OR", 'OR:[notes:"a]",notes:b]', or(eq("notes", "a]"), eq("notes", "b"))],
    // Plain strings that look like casts
    ["unknown cast name is a plain string", "notes:foo(bar)", eq("notes", "foo(bar)")],
    ["cast names are case-sensitive", "notes:Int(5)", eq("notes", "Int(5)")],
    ["parentheses without a name", "notes:(x)", eq("notes", "(x)")],
    ["unbalanced parentheses", "notes:a)b(", eq("notes", "a)b(")],
    ["spaces are part of the value", "firstName:Mary Ann", eq("firstName", "Mary Ann")],
    ["non-ASCII value", "firstName:Zoë 北京", eq("firstName", "Zoë 北京")],
    ["string that reads as a number stays a string on a string field", "firstName:123", eq("firstName", "123")],
    ["enum value", "status:PAID", eq("status", "PAID")],
    ["nullable enum value", "priority:HIGH", eq("priority", "HIGH")],
    // Casts and typed plain values
    ["int() on an int field", "quantity:int(5)", eq("quantity", 5)],
    ["negative int()", "quantity:int(-5)", eq("quantity", -5)],
    ["plain integer on an int field", "quantity:-12", eq("quantity", -12)],
    ["int32 maximum", "quantity:2147483647", eq("quantity", 2147483647)],
    ["int32 minimum", "quantity:-2147483648", eq("quantity", -2147483648)],
    ["plain decimal keeps its text", "totalAmount:gt:100", leaf("totalAmount", "gt", "100")],
    ["plain decimal with a fraction", "totalAmount:100.25", eq("totalAmount", "100.25")],
    ["decimal precision is preserved", "totalAmount:12345678901234567890.123456789", eq("totalAmount", "12345678901234567890.123456789")],
    ["leading plus is dropped from a decimal", "totalAmount:+5", eq("totalAmount", "5")],
    ["float() on a decimal field", "totalAmount:float(0.1)", eq("totalAmount", "0.1")],
    ["int() on a decimal field", "discount:lt:int(7)", leaf("discount", "lt", "7")],
    ["boolean true", "isActive:true", eq("isActive", true)],
    ["boolean false", "isActive:false", eq("isActive", false)],
    ["bool() cast", "isVip:bool(true)", eq("isVip", true)],
    ["date on a datetime field is midnight UTC", "createdAt:gte:2024-01-01", leaf("createdAt", "gte", utc("2024-01-01T00:00:00.000Z"))],
    ["date() cast", "createdAt:date(2024-01-01)", eq("createdAt", utc("2024-01-01T00:00:00.000Z"))],
    ["date() with a full date-time", "createdAt:lt:date(2024-01-01T10:20:30.123Z)", leaf("createdAt", "lt", utc("2024-01-01T10:20:30.123Z"))],
    ["date-time with an offset", "dueDate:date(2024-01-01T10:20:30+02:00)", eq("dueDate", utc("2024-01-01T08:20:30Z"))],
    ["date-time with a negative offset", "dueDate:2024-01-01T22:00:00-05:00", eq("dueDate", utc("2024-01-02T03:00:00Z"))],
    ["date-time without an offset is UTC", "createdAt:lt:2024-02-29T23:59", leaf("createdAt", "lt", utc("2024-02-29T23:59:00Z"))],
    ["fractions beyond milliseconds are truncated", "createdAt:2000-01-01T00:00:00.123456Z", eq("createdAt", utc("2000-01-01T00:00:00.123Z"))],
    ["leap day in a leap century", "createdAt:2000-02-29", eq("createdAt", utc("2000-02-29T00:00:00Z"))],
    // uuid fields: equality with a well-formed uuid, normalised to lower case
    ["uuid equality", "id:0193a4b2-7c5d-7e8f-9a0b-1c2d3e4f5a6b", eq("id", "0193a4b2-7c5d-7e8f-9a0b-1c2d3e4f5a6b")],
    ["upper-case uuid is lower-cased", "id:0193A4B2-7C5D-7E8F-9A0B-1C2D3E4F5A6B", eq("id", "0193a4b2-7c5d-7e8f-9a0b-1c2d3e4f5a6b")],
    ["mixed-case uuid is lower-cased", "businessId:0193A4b2-7C5d-7e8F-9A0b-1c2D3e4F5a6B", eq("businessId", "0193a4b2-7c5d-7e8f-9a0b-1c2d3e4f5a6b")],
    ["version 4 uuid", "id:f47ac10b-58cc-4372-a567-0e02b2c3d479", eq("id", "f47ac10b-58cc-4372-a567-0e02b2c3d479")],
    ["nil uuid", "id:00000000-0000-0000-0000-000000000000", eq("id", "00000000-0000-0000-0000-000000000000")],
    ["max uuid", "id:FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF", eq("id", "ffffffff-ffff-ffff-ffff-ffffffffffff")],
    ["any version and variant nibble", "id:12345678-1234-f234-0234-123456789abc", eq("id", "12345678-1234-f234-0234-123456789abc")],
    ["quoted uuid", 'clientId:"0193A4B2-7C5D-7E8F-9A0B-1C2D3E4F5A6B"', eq("clientId", "0193a4b2-7c5d-7e8f-9a0b-1c2d3e4f5a6b")],
    ["nullable uuid field", "clientId:0193a4b2-7c5d-7e8f-9a0b-1c2d3e4f5a6b", eq("clientId", "0193a4b2-7c5d-7e8f-9a0b-1c2d3e4f5a6b")],
    ["NOT of a uuid equality", "NOT:clientId:0193a4b2-7c5d-7e8f-9a0b-1c2d3e4f5a6b", not(eq("clientId", "0193a4b2-7c5d-7e8f-9a0b-1c2d3e4f5a6b"))],
    [
      "uuids inside OR",
      "OR:[id:0193a4b2-7c5d-7e8f-9a0b-1c2d3e4f5a6b,clientId:0193A4B2-7C5D-7E8F-9A0B-1C2D3E4F5A6B]",
      or(eq("id", "0193a4b2-7c5d-7e8f-9a0b-1c2d3e4f5a6b"), eq("clientId", "0193a4b2-7c5d-7e8f-9a0b-1c2d3e4f5a6b")),
    ],
    // AND, OR, NOT
    ["comma means AND", "firstName:A,lastName:B", and(eq("firstName", "A"), eq("lastName", "B"))],
    ["OR group", "OR:[firstName:A,lastName:B]", or(eq("firstName", "A"), eq("lastName", "B"))],
    ["OR with one element", "OR:[firstName:A]", or(eq("firstName", "A"))],
    ["NOT of a condition", "NOT:firstName:A", not(eq("firstName", "A"))],
    ["NOT of an operator condition", "NOT:quantity:gt:5", not(leaf("quantity", "gt", 5))],
    ["NOT of an OR group", "NOT:OR:[firstName:A,lastName:B]", not(or(eq("firstName", "A"), eq("lastName", "B")))],
    ["OR elements may be NOT and OR", "OR:[NOT:firstName:A,OR:[lastName:B,email:C]]", or(not(eq("firstName", "A")), or(eq("lastName", "B"), eq("email", "C")))],
    ["double negation", "NOT:NOT:firstName:A", not(not(eq("firstName", "A")))],
    [
      "AND of leaves, OR and NOT",
      "firstName:A,OR:[lastName:B,lastName:C],NOT:email:x",
      and(eq("firstName", "A"), or(eq("lastName", "B"), eq("lastName", "C")), not(eq("email", "x"))),
    ],
    ["NOT binds to one condition only", "NOT:firstName:A,lastName:B", and(not(eq("firstName", "A")), eq("lastName", "B"))],
    // Limits, at the limit
    ["depth 5 with NOT", "NOT:NOT:NOT:NOT:NOT:firstName:A", not(not(not(not(not(eq("firstName", "A"))))))],
    ["depth 5 with OR", "OR:[OR:[OR:[OR:[OR:[firstName:A]]]]]", or(or(or(or(or(eq("firstName", "A"))))))],
    ["depth 5 mixed", "NOT:OR:[NOT:OR:[NOT:firstName:A]]", not(or(not(or(not(eq("firstName", "A"))))))],
  ];

  it.each(cases)("%s: %s", (_name, input, expected) => {
    expect(parseWhere(input, testSpec)).toEqual(expected);
  });

  it("accepts exactly 50 conditions", () => {
    const node = parseWhere(manyLeaves(50), testSpec);
    expect(node.kind === "and" && node.conditions.length).toBe(50);
  });

  it("accepts exactly 2000 characters", () => {
    const input = `notes:${"x".repeat(2000 - "notes:".length)}`;
    expect(input).toHaveLength(2000);
    expect(parseWhere(input, testSpec)).toEqual(eq("notes", "x".repeat(1994)));
  });

  it("counts characters, not UTF-16 units, against the length limit", () => {
    const input = `notes:${"😀".repeat(1994)}`; // 2000 code points, 3994 UTF-16 units
    expect(parseWhere(input, testSpec)).toEqual(eq("notes", "😀".repeat(1994)));
  });
});

describe("parseWhere: rejected input -> 400019", () => {
  const cases: Array<[string, string, RegExp]> = [
    // Syntax
    ["empty string", "", /empty condition/],
    ["unknown field", "nickname:x", /unknown field "nickname"/],
    ["inherited property name is not a field", "constructor:x", /unknown field/],
    ["__proto__ is not a field", "__proto__:x", /unknown field/],
    ["field names are case-sensitive", "FirstName:x", /unknown field/],
    ["whitespace is not trimmed from field names", " firstName:x", /unknown field/],
    ["no colon", "firstName", /has no ":"/],
    ["empty field", ":x", /unknown field ""/],
    ["missing value", "firstName:", /missing value/],
    ["missing value after an operator", "firstName:gt:", /missing value/],
    ["trailing comma", "firstName:A,", /empty condition/],
    ["leading comma", ",firstName:A", /empty condition/],
    ["empty condition between commas", "firstName:A,,lastName:B", /empty condition/],
    ["unquoted [ in a value", "firstName:[x]", /must be quoted/],
    ["stray ] at top level", "firstName:a]", /unexpected "\]"/],
    ["unterminated quote", 'firstName:"abc', /unterminated/],
    ["text after a closing quote", 'firstName:"a"b', /after quoted value/],
    ["unknown escape in quotes", 'firstName:"a\\nb"', /invalid escape/],
    ["backslash at the end of a quoted value", 'firstName:"a\\', /invalid escape/],
    ["OR with no elements", "OR:[]", /OR:\[\] has no conditions/],
    ["unclosed OR", "OR:[firstName:A", /not closed/],
    ["trailing comma in OR", "OR:[firstName:A,]", /empty condition/],
    ["leading comma in OR", "OR:[,firstName:A]", /empty condition/],
    ["OR without brackets", "OR:firstName:A", /unknown field "OR"/],
    ["keywords are case-sensitive", "or:[firstName:A]", /unknown field "or"/],
    ["NOT with nothing after it", "NOT:", /empty condition/],
    ["NOT of a bracket list", "NOT:[firstName:A]", /empty condition/],
    ["junk after an OR group", "OR:[firstName:A]x", /unexpected "x"/],
    ["field name with a bracket", "first[Name:x", /unexpected "\[" before the field/],
    ["field name with a quote", 'first"Name:x', /unexpected """ before the field/],
    ["condition without a colon before a comma", "firstName,lastName:x", /unexpected "," before the field/],
    ["NUL character in a value", "firstName:a\u0000b", /NUL/],
    // Limits
    ["nesting depth 6 with NOT", "NOT:NOT:NOT:NOT:NOT:NOT:firstName:A", /deeper than 5/],
    ["nesting depth 6 with OR", "OR:[OR:[OR:[OR:[OR:[OR:[firstName:A]]]]]]", /deeper than 5/],
    ["nesting depth 6 mixed", "NOT:OR:[NOT:OR:[NOT:OR:[firstName:A]]]", /deeper than 5/],
    ["51 conditions", manyLeaves(51), /more than 50 conditions/],
    ["51 conditions inside OR groups", `OR:[${manyLeaves(25)}],OR:[${manyLeaves(26)}]`, /more than 50 conditions/],
    ["2001 characters", `notes:${"x".repeat(1995)}`, /longer than 2000/],
    // int fields
    ["word on an int field", "quantity:abc", /not a valid int/],
    ["fraction on an int field", "quantity:1.5", /not a valid int/],
    ["int() of a fraction", "quantity:int(1.5)", /not an integer/],
    ["int() of a word", "quantity:int(abc)", /not an integer/],
    ["empty int()", "quantity:int()", /not an integer/],
    ["float() on an int field", "quantity:float(1.5)", /cannot be compared/],
    ["bool() on an int field", "quantity:bool(true)", /cannot be compared/],
    ["date() on an int field", "score:date(2024-01-01)", /cannot be compared/],
    ["int above 32 bits", "quantity:2147483648", /out of range/],
    ["int below 32 bits", "quantity:int(-2147483649)", /out of range/],
    ["contains on an int field", "quantity:contains:1", /string fields only/],
    // decimal fields
    ["word on a decimal field", "totalAmount:abc", /not a valid decimal/],
    ["exponent on a decimal field", "totalAmount:1e5", /not a valid decimal/],
    ["bare dot on a decimal field", "totalAmount:1.", /not a valid decimal/],
    ["float() of a word", "totalAmount:float(abc)", /not a decimal number/],
    ["bool() on a decimal field", "totalAmount:bool(true)", /cannot be compared/],
    ["date() on a decimal field", "totalAmount:date(2024-01-01)", /cannot be compared/],
    ["startsWith on a decimal field", "totalAmount:startsWith:1", /string fields only/],
    // boolean fields
    ["yes on a boolean field", "isActive:yes", /not a valid boolean/],
    ["upper-case TRUE on a boolean field", "isActive:TRUE", /not a valid boolean/],
    ["1 on a boolean field", "isActive:1", /not a valid boolean/],
    ["bool() of a non-boolean", "isActive:bool(maybe)", /neither true nor false/],
    ["int() on a boolean field", "isActive:int(1)", /cannot be compared/],
    ["gt on a boolean field", "isActive:gt:true", /does not apply to boolean/],
    ["lte on a boolean field", "isVip:lte:false", /does not apply to boolean/],
    ["contains on a boolean field", "isActive:contains:t", /string fields only/],
    // datetime fields
    ["word on a datetime field", "createdAt:yesterday", /not a valid datetime/],
    ["month 13", "createdAt:2024-13-01", /not a valid datetime/],
    ["30 February", "createdAt:2024-02-30", /not a valid datetime/],
    ["29 February of a common year", "createdAt:2023-02-29", /not a valid datetime/],
    ["29 February of a non-leap century", "createdAt:1900-02-29", /not a valid datetime/],
    ["hour 24", "createdAt:2024-01-01T24:00:00Z", /not a valid datetime/],
    ["minute 60", "createdAt:2024-01-01T10:60Z", /not a valid datetime/],
    ["offset with a space (an unencoded + in a URL)", "createdAt:2024-01-01T10:00:00 01:00", /not a valid datetime/],
    ["date() of a word", "createdAt:date(x)", /not an ISO 8601/],
    ["date() of a timestamp number", "createdAt:date(1700000000)", /not an ISO 8601/],
    ["int() on a datetime field", "createdAt:int(5)", /cannot be compared/],
    ["contains on a datetime field", "createdAt:contains:2024", /string fields only/],
    // enum fields
    ["enum values are case-sensitive", "status:paid", /not a valid enum/],
    ["unknown enum value", "status:UNKNOWN", /not a valid enum/],
    ["gt on an enum field", "status:gt:PAID", /does not apply to enum/],
    ["lt on an enum field", "priority:lt:HIGH", /does not apply to enum/],
    ["contains on an enum field", "status:contains:PA", /string fields only/],
    ["startsWith on an enum field", "status:startsWith:P", /string fields only/],
    ["cast on an enum field", "status:int(1)", /cannot be compared/],
    // uuid fields: equality with a well-formed uuid only, no operators, no casts
    ["word on a uuid field", "id:abc", /not a valid uuid for field "id"/],
    ["number on a uuid field", "clientId:123", /not a valid uuid/],
    ["uuid without hyphens", "id:0193a4b27c5d7e8f9a0b1c2d3e4f5a6b", /not a valid uuid/],
    ["uuid in braces", "id:{0193a4b2-7c5d-7e8f-9a0b-1c2d3e4f5a6b}", /not a valid uuid/],
    ["urn:uuid: prefix", "id:urn:uuid:0193a4b2-7c5d-7e8f-9a0b-1c2d3e4f5a6b", /not a valid uuid/],
    ["uuid one digit short", "id:0193a4b2-7c5d-7e8f-9a0b-1c2d3e4f5a6", /not a valid uuid/],
    ["uuid one digit long", "id:0193a4b2-7c5d-7e8f-9a0b-1c2d3e4f5a6b0", /not a valid uuid/],
    ["non-hex digit in a uuid", "id:0193a4b2-7c5d-7e8f-9a0b-1c2d3e4f5a6g", /not a valid uuid/],
    ["misplaced hyphens", "id:0193a4b27-c5d-7e8f-9a0b-1c2d3e4f5a6b", /not a valid uuid/],
    ["spaces around a uuid are not trimmed", "id: 0193a4b2-7c5d-7e8f-9a0b-1c2d3e4f5a6b", /not a valid uuid/],
    ["empty quoted value on a uuid field", 'clientId:""', /not a valid uuid/],
    ["uuid(...) is not a cast", "id:uuid(0193a4b2-7c5d-7e8f-9a0b-1c2d3e4f5a6b)", /not a valid uuid/],
    ["gt on a uuid field", "id:gt:0193a4b2-7c5d-7e8f-9a0b-1c2d3e4f5a6b", /"gt" does not apply to uuid field "id"/],
    ["gte on a uuid field", "id:gte:0193a4b2-7c5d-7e8f-9a0b-1c2d3e4f5a6b", /"gte" does not apply to uuid/],
    ["lt on a uuid field", "businessId:lt:0193a4b2-7c5d-7e8f-9a0b-1c2d3e4f5a6b", /"lt" does not apply to uuid/],
    ["lte on a nullable uuid field", "clientId:lte:0193a4b2-7c5d-7e8f-9a0b-1c2d3e4f5a6b", /"lte" does not apply to uuid/],
    ["contains on a uuid field", "id:contains:0193", /"contains" does not apply to uuid/],
    ["startsWith on a uuid field", "clientId:startsWith:0193", /"startsWith" does not apply to uuid/],
    ["endsWith on a uuid field", "id:endsWith:5a6b", /"endsWith" does not apply to uuid/],
    ["int() on a uuid field", "id:int(5)", /int\(\) cannot be compared with uuid field "id"/],
    ["float() on a uuid field", "id:float(1.5)", /float\(\) cannot be compared with uuid/],
    ["bool() on a uuid field", "clientId:bool(true)", /bool\(\) cannot be compared with uuid/],
    ["date() on a uuid field", "clientId:date(2024-01-01)", /date\(\) cannot be compared with uuid/],
    ["a cast wrapping a valid uuid", "id:date(0193a4b2-7c5d-7e8f-9a0b-1c2d3e4f5a6b)", /cannot be compared with uuid/],
    ["a bad uuid under NOT", "NOT:clientId:x", /not a valid uuid/],
    ["a bad uuid inside OR", "OR:[id:0193a4b2-7c5d-7e8f-9a0b-1c2d3e4f5a6b,clientId:gt:0193a4b2-7c5d-7e8f-9a0b-1c2d3e4f5a6b]", /does not apply to uuid/],
    // string fields
    ["int() on a string field", "firstName:int(5)", /cannot be compared/],
    ["float() on a string field", "firstName:float(1.5)", /cannot be compared/],
    ["bool() on a string field", "firstName:bool(true)", /cannot be compared/],
    ["date() on a string field", "firstName:date(2024-01-01)", /cannot be compared/],
    ["an error inside OR", "OR:[firstName:A,quantity:abc]", /not a valid int/],
    ["an error under NOT", "NOT:nickname:x", /unknown field/],
  ];

  it.each(cases)("%s: %s", (_name, input, reason) => {
    const error = thrownBy(() => parseWhere(input, testSpec));
    expect(error).toBeInstanceOf(AppError);
    expect((error as AppError).code).toBe(400019);
    // Where it went wrong, in the body: one detail on the parameter, the same reason as the logged cause.
    expect((error as AppError).details).toEqual([{ path: "where", message: String((error as AppError).cause) }]);
    expect(String((error as AppError).cause)).toMatch(reason);
  });

  it.each([
    ["an array (repeated query parameter)", ["firstName:A", "lastName:B"]],
    ["an object (bracketed query parameter)", { a: "b" }],
    ["a number", 5],
  ])("rejects %s", (_name, input) => {
    const error = thrownBy(() => parseWhere(input as unknown as string, testSpec));
    expect(error).toBeInstanceOf(AppError);
    expect((error as AppError).code).toBe(400019);
  });

  it("rejects deep nesting without overflowing the stack", () => {
    const deepOr = `${"OR:[".repeat(499)}firstName:A${"]".repeat(499)}`.slice(0, 2000);
    const deepNot = `${"NOT:".repeat(499)}firstName:A`.slice(0, 2000);
    for (const input of [deepOr, deepNot, "NOT:".repeat(100_000)]) {
      const error = thrownBy(() => parseWhere(input, testSpec));
      expect(error).toBeInstanceOf(AppError);
      expect((error as AppError).code).toBe(400019);
    }
  });

  it("answers with the catalogue's code and message, and a detail saying where", () => {
    const error = thrownBy(() => parseWhere("nickname:x", testSpec)) as AppError;
    expect(error.toBody()).toEqual({
      success: false,
      error: { code: 400019, message: "Invalid query format", details: [{ path: "where", message: 'unknown field "nickname" at character 1' }] },
    });
    expect(error.status).toBe(400);
  });

  // The message names the field, the cast or the character position (counted from 1), as a reader sees the query.
  it.each([
    ["an unknown field", "foo:bar", 'unknown field "foo" at character 1'],
    ["an unknown field after others", "firstName:A,foo:bar", 'unknown field "foo" at character 13'],
    ["an unclosed OR", "OR:[status:PAID", "malformed where at character 16: OR:[ is not closed by ]"],
    ["a value the field cannot take", "isActive:maybe", '"maybe" is not a valid boolean for field "isActive"'],
    ["a cast that does not parse", "createdAt:gte:date(garbage)", '"date(garbage)" is not an ISO 8601 date or date-time (field "createdAt")'],
    ["an enum value, with the values there are", "status:paid", '"paid" is not a valid enum for field "status" (one of DRAFT, SENT, PAID, OVERDUE, VOID)'],
    ["a long value, cut in the message", `quantity:${"9".repeat(100)}`, `"${"9".repeat(60)}…" is out of range for integer field "quantity"`],
  ])("%s: %s", (_name, input, message) => {
    const error = thrownBy(() => parseWhere(input, testSpec)) as AppError;
    expect(error.details).toEqual([{ path: "where", message }]);
  });
});
