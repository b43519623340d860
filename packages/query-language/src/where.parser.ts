// Recursive-descent parser for the `where` filter language (interface §4 "Filter syntax",
// decisions §3 and §8). Grammar:
//
//   where     := list EOF
//   list      := condition ("," condition)*
//   condition := "OR:[" list "]" | "NOT:" condition | leaf
//   leaf      := field ":" (operator ":")? value
//   field     := everything up to the first ":" (no , [ ] ")
//   operator  := gt | gte | lt | lte | contains | startsWith | endsWith
//   value     := '"' (char | '\"' | '\\')* '"' | unquoted (no , [ ], ends at , or ] or EOF)
//
// Recursion happens only through OR and NOT, and both are counted against the depth limit before
// descending, so no input can exhaust the stack. The length limit is checked before anything else.
import { FILTER_OPERATORS, MAX_WHERE_CONDITIONS, MAX_WHERE_DEPTH, MAX_WHERE_LENGTH } from "./limits.constants";
import { hasOwn, invalidWhere, quoted } from "./query.errors";
import type { ConditionNode, Operator, QuerySpec, WhereNode } from "./query.types";
import { coerceValue, type RawValue } from "./value.coercer";

const OR_OPEN = "OR:[";
const NOT_PREFIX = "NOT:";

export function parseWhere(input: string, spec: QuerySpec): WhereNode {
  if (typeof input !== "string") throw invalidWhere("where must be given once, as one string");
  // Counted in code points: a client's "characters" are not UTF-16 halves.
  if (input.length > MAX_WHERE_LENGTH && Array.from(input).length > MAX_WHERE_LENGTH) {
    throw invalidWhere(`where is longer than ${MAX_WHERE_LENGTH} characters`);
  }
  return new WhereParser(input, spec).parse();
}

class WhereParser {
  private pos = 0;
  private leaves = 0;

  constructor(
    private readonly src: string,
    private readonly spec: QuerySpec,
  ) {}

  parse(): WhereNode {
    const conditions = this.parseList(0);
    if (this.pos !== this.src.length) throw this.malformed(`unexpected "${this.src[this.pos]}"`);
    // A single condition is returned bare so the AST (and the Prisma filter) has no one-element AND.
    return conditions.length === 1 ? (conditions[0] as WhereNode) : { kind: "and", conditions };
  }

  private parseList(depth: number): WhereNode[] {
    const conditions: WhereNode[] = [this.parseCondition(depth)];
    while (this.src[this.pos] === ",") {
      this.pos += 1;
      conditions.push(this.parseCondition(depth));
    }
    return conditions;
  }

  private parseCondition(depth: number): WhereNode {
    if (this.src.startsWith(OR_OPEN, this.pos)) {
      this.enter(depth);
      this.pos += OR_OPEN.length;
      if (this.src[this.pos] === "]") throw this.malformed("OR:[] has no conditions");
      const conditions = this.parseList(depth + 1);
      if (this.src[this.pos] !== "]") throw this.malformed("OR:[ is not closed by ]");
      this.pos += 1;
      return { kind: "or", conditions };
    }
    if (this.src.startsWith(NOT_PREFIX, this.pos)) {
      this.enter(depth);
      this.pos += NOT_PREFIX.length;
      return { kind: "not", condition: this.parseCondition(depth + 1) };
    }
    return this.parseLeaf();
  }

  /** Checked before descending, so the depth limit also bounds the parser's own recursion. */
  private enter(depth: number): void {
    if (depth + 1 > MAX_WHERE_DEPTH) throw invalidWhere(`where nests deeper than ${MAX_WHERE_DEPTH} levels`);
  }

  private parseLeaf(): ConditionNode {
    const start = this.pos;
    while (this.pos < this.src.length && this.src[this.pos] !== ":") {
      const ch = this.src[this.pos] as string;
      if (ch === "," || ch === "[" || ch === "]" || ch === '"') {
        throw this.malformed(this.pos === start ? "empty condition" : `unexpected "${ch}" before the field's ":"`);
      }
      this.pos += 1;
    }
    if (this.pos >= this.src.length) {
      throw this.malformed(this.pos === start ? "empty condition" : `condition "${this.src.slice(start)}" has no ":"`);
    }
    const field = this.src.slice(start, this.pos);
    this.pos += 1;
    if (!hasOwn(this.spec.fields, field)) throw invalidWhere(`unknown field ${quoted(field)} at character ${start + 1}`);
    const fieldSpec = this.spec.fields[field]!;

    const operator = this.parseOperator();
    const raw = this.parseValue(field);
    this.leaves += 1;
    if (this.leaves > MAX_WHERE_CONDITIONS) throw invalidWhere(`where has more than ${MAX_WHERE_CONDITIONS} conditions`);
    return { kind: "condition", field, operator, value: coerceValue(field, fieldSpec, operator, raw) };
  }

  /** The next segment is an operator only when it is exactly one of the seven names followed by ":". */
  private parseOperator(): Operator {
    for (const op of FILTER_OPERATORS) {
      if (this.src.startsWith(op, this.pos) && this.src[this.pos + op.length] === ":") {
        this.pos += op.length + 1;
        return op;
      }
    }
    return "equals";
  }

  private parseValue(field: string): RawValue {
    if (this.src[this.pos] === '"') return this.parseQuoted(field);
    const start = this.pos;
    while (this.pos < this.src.length) {
      const ch = this.src[this.pos];
      if (ch === "," || ch === "]") break;
      if (ch === "[") throw this.malformed(`value for "${field}" contains "[" and must be quoted`);
      this.pos += 1;
    }
    // An empty value is almost always a client bug (`name:`); an empty string is written `""`.
    if (this.pos === start) throw this.malformed(`missing value for "${field}"`);
    return { text: this.src.slice(start, this.pos), quoted: false };
  }

  private parseQuoted(field: string): RawValue {
    this.pos += 1; // opening quote
    let text = "";
    for (;;) {
      if (this.pos >= this.src.length) throw this.malformed(`unterminated quoted value for "${field}"`);
      const ch = this.src[this.pos] as string;
      if (ch === '"') {
        this.pos += 1;
        break;
      }
      if (ch === "\\") {
        const next = this.src[this.pos + 1];
        // Only the two documented escapes exist; anything else is refused rather than guessed at.
        if (next !== '"' && next !== "\\") throw this.malformed(`invalid escape in quoted value for "${field}"`);
        text += next;
        this.pos += 2;
        continue;
      }
      text += ch;
      this.pos += 1;
    }
    const after = this.src[this.pos];
    if (after !== undefined && after !== "," && after !== "]") {
      throw this.malformed(`unexpected "${after}" after quoted value for "${field}"`);
    }
    return { text, quoted: true };
  }

  /** Positions count characters from 1, as a reader of the query string would. */
  private malformed(reason: string) {
    return invalidWhere(`malformed where at character ${this.pos + 1}: ${reason}`);
  }
}
