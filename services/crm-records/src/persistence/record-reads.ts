// What the reads of records send to the database: a list's page and its total as the statements of
// list-sql.ts (D13), one record by id, and the relations `include` loads, through Prisma for both.
import type { RecordEntity } from "@crm/contracts";
import type { SqlRunner } from "@crm/database";
import { DEFAULT_ORDER_BY, toPrismaOrderBy, type OrderTerm } from "@crm/query-language";
import type { EntityDefinition } from "../entities";
import { DecimalText } from "../domain/money";
import { includedRowsToRead } from "../domain/included-relations";
import type { Row } from "../domain/record.serializer";
import { orderBySql, type SqlParams } from "./list-sql";
import { delegateOf, type PrismaClient } from "./prisma";
import { recordCount } from "./record-count";

/** Runs one statement with bound parameters; `name`: prepared once per connection under it (SqlRunner.query). */
export type RunStatement = (text: string, params: unknown[], name?: string) => Promise<Row[]>;

/**
 * Statements on the database driver itself (pg's pool, or PGlite), not Prisma's raw query path,
 * which cost more CPU per list call and per create (D13, D14).
 */
export function statementRunner(sql: Pick<SqlRunner, "query">): RunStatement {
  return async (text, params, name) => (await sql.query<Row>(text, params, name ? { name } : undefined)).rows;
}

const ITEMS_ORDER = { orderBy: { position: "asc" } } as const;
/** The default order (newest first) as Prisma arguments: included to-many relations and cascaded children. */
export const DEFAULT_ORDER = toPrismaOrderBy(DEFAULT_ORDER_BY.map((term) => ({ ...term })));

/** What every read of a record loads beside its columns: an invoice's or quote's line items, in order. */
export function baseInclude(definition: EntityDefinition): { include?: Record<string, unknown> } {
  return definition.document ? { include: { [definition.document.itemsRelation]: ITEMS_ORDER } } : {};
}

export interface RecordReadsOptions {
  prisma: PrismaClient;
  definitions: Readonly<Record<RecordEntity, EntityDefinition>>;
  run: RunStatement;
  /** Most related records per parent and to-many relation in a response (included-relations.ts). */
  includeCap: number;
}

export class RecordReads {
  constructor(private readonly options: RecordReadsOptions) {}

  /** Up to take + 1 rows in order (the extra one only says whether more follow), with their relations when asked for. */
  async page(
    definition: EntityDefinition,
    businessId: string,
    where: string,
    params: SqlParams,
    orderBy: readonly OrderTerm[],
    take: number,
    skip: number,
    relations: readonly string[],
  ): Promise<Row[]> {
    const columns = Object.keys(definition.columns)
      .map((name) => `"${name}"`)
      .join(", ");
    // take and skip are integers the parser bounded; everything from the client is a parameter.
    const rows = await this.options.run(
      `SELECT ${columns} FROM ${definition.table} WHERE ${where} ORDER BY ${orderBySql(orderBy)} LIMIT ${take + 1} OFFSET ${skip}`,
      params.values,
    );
    // The driver returns NUMERIC as exact text; Prisma as a Decimal. Both read the same from here on.
    for (const name of decimalColumns(definition)) {
      for (const row of rows) if (typeof row[name] === "string") row[name] = new DecimalText(row[name] as string);
    }
    const include = this.includeArgs(definition, relations, businessId);
    if (!include || rows.length === 0) return rows;
    // Relations and line items through Prisma, for the page's ids only; a record deleted between
    // the two reads is left out rather than shown without its relations.
    const related = await delegateOf(this.options.prisma, definition.delegate).findMany({ where: { businessId, id: { in: rows.map((row) => row["id"]) } }, include });
    const byId = new Map(related.map((row) => [row["id"], row]));
    return rows.flatMap((row) => {
      const full = byId.get(row["id"]);
      return full ? [full] : [];
    });
  }

  /** The exact total: unfiltered, the counts every create and delete keep (record-count.ts); filtered, the matches counted. */
  async total(definition: EntityDefinition, businessId: string, filter: { where: string; params: SqlParams } | undefined): Promise<number> {
    if (filter === undefined) return recordCount(this.options.run, businessId, definition.entity);
    const rows = await this.options.run(`SELECT count(*) AS "total" FROM ${definition.table} WHERE ${filter.where}`, filter.params.values);
    return Number(rows[0]?.["total"] ?? 0);
  }

  /** One record of the business with its line items and `relations`, or null. */
  async one(definition: EntityDefinition, businessId: string, id: string, relations: readonly string[]): Promise<Row | null> {
    const include = this.includeArgs(definition, relations, businessId);
    return delegateOf(this.options.prisma, definition.delegate).findFirst({ where: { id, businessId }, ...(include ? { include } : {}) });
  }

  /** Relations to load; every to-many include is filtered by business too (the FKs already keep them inside it). */
  private includeArgs(definition: EntityDefinition, relations: readonly string[], businessId: string): Record<string, unknown> | undefined {
    const include: Record<string, unknown> = { ...baseInclude(definition).include };
    for (const name of relations) {
      const relation = definition.relations[name]!;
      const target = this.options.definitions[relation.target];
      const nested = baseInclude(target);
      include[name] =
        relation.kind === "many" ? { where: { businessId }, orderBy: DEFAULT_ORDER, take: includedRowsToRead(this.options.includeCap), ...nested } : nested.include ? nested : true;
    }
    return Object.keys(include).length > 0 ? include : undefined;
  }
}

function decimalColumns(definition: EntityDefinition): string[] {
  return Object.entries(definition.columns)
    .filter(([, column]) => column.type === "decimal")
    .map(([name]) => name);
}
