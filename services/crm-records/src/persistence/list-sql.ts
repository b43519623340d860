// The list query language compiled straight to parameterised SQL for one entity's table: the page,
// the filtered count and the keyset of cursor pages. It means exactly what the Prisma arguments of
// @crm/query-language (toPrismaWhere, toPrismaOrderBy) plus where-guard.ts mean, so both stay the
// specification; test/list-sql.test.ts runs the two side by side on the same rows.
//
// Why not Prisma here: its client costs far more CPU per list call building and reading these two
// statements (D13; RECORDS_LIST_SQL=false lists through Prisma instead, record-reads.ts). Every value is a bound parameter whose type PostgreSQL infers
// from the column it meets; identifiers come from the entity definition, never from the request.
import { isUuid } from "@crm/contracts";
import { escapeLike, invalidWhere, type ConditionNode, type OrderTerm, type WhereNode } from "@crm/query-language";
import type { EntityDefinition } from "../entities";
import type { DeletedMode } from "../domain/deleted-mode";
import { customFieldKey, type CustomFieldTypes } from "../domain/custom-field-query";
import { customLeaf, customNegatedLeaf, customSortExpression } from "./custom-field-sql";
import type { SortValuesScope } from "./custom-field-range";

/** Collects bound parameters; `add` returns the placeholder. */
export class SqlParams {
  readonly values: unknown[] = [];
  add(value: unknown): string {
    this.values.push(value);
    return `$${this.values.length}`;
  }
}

const COMPARISONS = { equals: "=", gt: ">", gte: ">=", lt: "<", lte: "<=" } as const;

function column(name: string): string {
  return `"${name}"`;
}

/**
 * The trash condition of `deleted` (extensions §E5), written as the partial indexes' predicates
 * (`"deletedAt" IS NULL` / `IS NOT NULL`, migrations 20261129030100 and 20261129030200), so the planner
 * can prove them and a live list keeps its index (and index-only counts). Nothing for `include`.
 */
export function trashSql(deleted: DeletedMode): string | undefined {
  if (deleted === "include") return undefined;
  return deleted === "exclude" ? `"deletedAt" IS NULL` : `"deletedAt" IS NOT NULL`;
}

/**
 * The WHERE clause of a list: the business and the trash condition first, then the client's filter, then the keyset.
 * `customRanges`: ranges on custom fields read their sort values (D35, custom-field-range.ts); false: they cast every value.
 */
export function listWhereSql(
  definition: EntityDefinition,
  params: SqlParams,
  businessId: string,
  deleted: DeletedMode,
  where: WhereNode | undefined,
  after?: { orderBy: readonly OrderTerm[]; key: readonly unknown[] },
  custom: CustomFieldTypes = NO_CUSTOM_FIELDS,
  customRanges = true,
): string {
  // The business scope is ANDed outside whatever the client wrote, so no filter can widen it.
  const business = params.add(businessId);
  const parts = [`"businessId" = ${business}::uuid`];
  const trash = trashSql(deleted);
  if (trash) parts.push(trash);
  // The entity is one of the fixed entity names, never the client's text.
  const sortValues = customRanges ? { business, entity: `'${definition.entity}'`, table: definition.table, conjunct: false } : undefined;
  const scope: Scope = { definition, params, custom, sortValues };
  if (where) parts.push(compile(scope, where, false, true));
  if (after) parts.push(keysetSql(scope, after.orderBy, after.key));
  return parts.join(" AND ");
}

export function orderBySql(orderBy: readonly OrderTerm[], custom: CustomFieldTypes = NO_CUSTOM_FIELDS): string {
  return orderBy.map((term) => `${sortExpression(custom, term.field)} ${term.direction === "asc" ? "ASC" : "DESC"}`).join(", ");
}

const NO_CUSTOM_FIELDS: CustomFieldTypes = new Map();

/** What a statement's fragments are written for: the entity, its bound parameters, and the active custom fields. */
interface Scope {
  definition: EntityDefinition;
  params: SqlParams;
  custom: CustomFieldTypes;
  /** Set: ranges on custom fields read the sort values of this business and entity. */
  sortValues: SortValuesScope | undefined;
}

/** A field as ORDER BY and the keyset read it: a column, or a custom field's typed value (custom-field-sql.ts). */
function sortExpression(custom: CustomFieldTypes, field: string): string {
  const key = customFieldKey(field);
  return key === undefined ? column(field) : customSortExpression(key, customTypeOf(custom, key));
}

/** The type of an active custom field; the parser admits no other key, so a miss is a programming error. */
function customTypeOf(custom: CustomFieldTypes, key: string) {
  const type = custom.get(key);
  if (type === undefined) throw new Error(`custom field "${key}" is not an active definition of this list`);
  return type;
}

/**
 * Negation is pushed to the leaves exactly as toPrismaWhere does (see where.compiler.ts for why).
 * `conjunct`: every record the statement selects meets `node` (it is reached from the root through ANDs
 * alone, not negated), so the records a custom range selects may drive the statement (custom-field-range.ts).
 */
function compile(scope: Scope, node: WhereNode, negated: boolean, conjunct: boolean): string {
  switch (node.kind) {
    case "condition": {
      const key = customFieldKey(node.field);
      if (key !== undefined) {
        const type = customTypeOf(scope.custom, key);
        const sortValues = scope.sortValues && { ...scope.sortValues, conjunct: conjunct && !negated };
        return negated ? customNegatedLeaf(scope.params, key, type, node, sortValues) : customLeaf(scope.params, key, type, node, sortValues);
      }
      return negated ? negatedLeaf(scope.definition, scope.params, node) : leaf(scope.definition, scope.params, node);
    }
    case "and":
    case "or": {
      const joiner = (node.kind === "and") !== negated ? " AND " : " OR ";
      return `(${node.conditions.map((child) => compile(scope, child, negated, conjunct && joiner === " AND ")).join(joiner)})`;
    }
    case "not":
      return compile(scope, node.condition, !negated, conjunct);
  }
}

function negatedLeaf(definition: EntityDefinition, params: SqlParams, node: ConditionNode): string {
  const negation = `NOT ${leaf(definition, params, node)}`;
  const nullable = definition.columns[node.field]?.nullable ?? true;
  return nullable ? `(${column(node.field)} IS NULL OR ${negation})` : negation;
}

function leaf(definition: EntityDefinition, params: SqlParams, node: ConditionNode): string {
  const name = column(node.field);
  if (definition.columns[node.field]?.uuid) {
    // where-guard.ts: substrings of an id mean nothing; equality with a non-id matches nothing;
    // ordering against a non-id cannot be expressed.
    if (node.operator === "contains" || node.operator === "startsWith" || node.operator === "endsWith") {
      throw invalidWhere(`substring operators do not apply to id field "${node.field}"`);
    }
    if (typeof node.value === "string" && !isUuid(node.value)) {
      if (node.operator === "equals") return "(FALSE)";
      throw invalidWhere(`"${node.value}" is not an id, so it cannot be compared with "${node.field}"`);
    }
  }
  switch (node.operator) {
    case "contains":
      return `(${name} ILIKE ${params.add(`%${escapeLike(String(node.value))}%`)})`;
    case "startsWith":
      return `(${name} ILIKE ${params.add(`${escapeLike(String(node.value))}%`)})`;
    case "endsWith":
      return `(${name} ILIKE ${params.add(`%${escapeLike(String(node.value))}`)})`;
    default:
      return `(${name} ${COMPARISONS[node.operator]} ${params.add(node.value)})`;
  }
}

/**
 * Rows strictly after `key` (the values of `orderBy`'s fields on the last row read) in that order.
 * PostgreSQL sorts NULLs last ascending and first descending. When every field is non-null and
 * every direction the same (the default order, any single-field sort on a required field), it is
 * one row comparison, which the (businessId, field, id) indexes answer as a range: the cost of a
 * page does not depend on how deep it is.
 */
function keysetSql({ definition, params, custom }: Scope, orderBy: readonly OrderTerm[], key: readonly unknown[]): string {
  // A custom field is never a column: always nullable (a record may have no value).
  const nullable = (field: string) => definition.columns[field]?.nullable ?? true;
  const sameDirection = orderBy.every((term) => term.direction === orderBy[0]!.direction);
  if (sameDirection && orderBy.every((term) => !nullable(term.field))) {
    const fields = orderBy.map((term) => sortExpression(custom, term.field)).join(", ");
    const values = key.map((value) => params.add(value)).join(", ");
    return `(${fields}) ${orderBy[0]!.direction === "asc" ? ">" : "<"} (${values})`;
  }
  const after = (i: number): string => {
    const term = orderBy[i]!;
    const name = sortExpression(custom, term.field);
    const value = key[i];
    const last = i === orderBy.length - 1;
    const ascending = term.direction === "asc";
    if (value === null) {
      // NULLs sit at the end ascending (nothing is after them but other NULLs) and at the start descending.
      const equal = `${name} IS NULL`;
      const tail = last ? "FALSE" : `(${equal} AND ${after(i + 1)})`;
      return ascending ? tail : `(${name} IS NOT NULL OR ${tail})`;
    }
    const placeholder = params.add(value);
    const beyond = `${name} ${ascending ? ">" : "<"} ${placeholder}`;
    const nullsAfter = ascending && nullable(term.field) ? ` OR ${name} IS NULL` : "";
    if (last) return `(${beyond}${nullsAfter})`;
    return `(${beyond}${nullsAfter} OR (${name} = ${placeholder} AND ${after(i + 1)}))`;
  };
  return after(0);
}
