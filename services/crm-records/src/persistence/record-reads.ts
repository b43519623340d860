// What the reads of records send to the database: a list's page and its total as the statements of
// list-sql.ts (D13) or, with that device off, as Prisma's findMany and count; one record by id; and
// the relations `include` loads, through Prisma for both.
import { CUSTOM_FIELDS_PROPERTY, type RecordEntity } from "@crm/contracts";
import type { SqlRunner } from "@crm/database";
import { DEFAULT_ORDER_BY, toPrismaOrderBy, toPrismaWhere, type OrderTerm, type QuerySpec, type WhereNode } from "@crm/query-language";
import { querySpecOf, type EntityDefinition } from "../entities";
import { guardUuidFilters } from "../domain/where-guard";
import { DecimalText } from "../domain/money";
import { includedRowsToRead } from "../domain/included-relations";
import type { Row } from "../domain/record.serializer";
import type { DeletedMode } from "../domain/deleted-mode";
import { listWhereSql, orderBySql, SqlParams } from "./list-sql";
import { type CustomFieldTypes, namesCustomField } from "../domain/custom-field-query";
import { delegateOf, type PrismaClient } from "./prisma";
import { recordCount } from "./record-count";
import { customSortOf, customSortPageSql } from "./custom-sort-list";
import { customEqualityCountSql } from "./custom-field-count";

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

/** Tuning devices of the reads (docs/performance.md), each on unless turned off. */
export interface ReadDevices {
  /** D13: a list's page and filtered total as SQL on the driver (list-sql.ts); off: Prisma's findMany and count. */
  listSql: boolean;
  /** D16: the unfiltered total from the count slots (record-count.ts); off: the business's rows counted. */
  countSlots: boolean;
  /** D35: ranges on custom fields from their sort values' index (custom-field-range.ts); off: every record's value cast. */
  customRanges: boolean;
  /** D36: the total of one `eq` on a custom field from its sort values' index (custom-field-count.ts); off: the records counted. */
  customCounts: boolean;
}

export interface RecordReadsOptions {
  prisma: PrismaClient;
  definitions: Readonly<Record<RecordEntity, EntityDefinition>>;
  run: RunStatement;
  /** Most related records per parent and to-many relation in a response (included-relations.ts). */
  includeCap: number;
  /** PostgreSQL: page and total on two pooled connections at once. PGlite has one connection, and its adapter stalls on concurrent queries. */
  parallelQueries: boolean;
  devices: ReadDevices;
}

/** One page of a list: live or trashed records, the client's filter, its order, and where the page starts (offset, or after a cursor's key). */
export interface PageQuery {
  deleted: DeletedMode;
  filter: WhereNode | undefined;
  orderBy: readonly OrderTerm[];
  take: number;
  skip: number;
  /** A cursor page: the values of `orderBy`'s fields on the last row of the page before. */
  afterKey?: readonly unknown[];
  /** The business's active custom fields of the entity, which `filter` and `orderBy` may name as `customFields.<key>`. */
  custom?: CustomFieldTypes;
  /**
   * Read the business's custom field definition version with the page, in its statement (D34): the
   * definitions that shape the rows are then the ones of the rows' own snapshot, with no statement of
   * their own. SQL lists only (list-sql.ts); undefined in the answer otherwise, or when the page is empty.
   */
  withDefinitionsVersion?: boolean;
}

/** The page statement's extra column with the definition version (PageQuery.withDefinitionsVersion). */
const DEFINITIONS_VERSION_COLUMN = "__definitionsVersion";

export class RecordReads {
  private readonly specs = new Map<RecordEntity, QuerySpec>();

  constructor(private readonly options: RecordReadsOptions) {
    for (const definition of Object.values(options.definitions)) this.specs.set(definition.entity, querySpecOf(definition));
  }

  /**
   * Up to take + 1 rows in order (the extra one only says whether more follow), with their relations
   * when asked for, and with `withTotal` the exact number of matching records. Page and total without a
   * transaction (in parallel where the pool allows): each is exact at the moment it is read.
   */
  async list(
    definition: EntityDefinition,
    businessId: string,
    query: PageQuery,
    relations: readonly string[],
    withTotal: boolean,
  ): Promise<{ rows: Row[]; total?: number; definitionsVersion?: bigint }> {
    // Prisma can neither sort on a JSON path nor cast one, so a list naming a custom field is SQL in both modes (D35).
    const viaSql = this.options.devices.listSql || namesCustomField(query.filter, query.orderBy);
    const list = viaSql ? this.sqlList(definition, businessId, query) : this.prismaList(definition, businessId, query);
    let definitionsVersion: bigint | undefined;
    const page = () =>
      this.withRelations(
        definition,
        businessId,
        list.page().then((rows) => {
          definitionsVersion = takeDefinitionsVersion(rows);
          return rows;
        }),
        relations,
      );
    // The count slots count live records (extensions §E5): a delete takes its record off, a restore puts it back.
    const slotsAnswer = query.filter === undefined && query.deleted === "exclude" && this.options.devices.countSlots;
    const total = () => (slotsAnswer ? recordCount(this.options.run, businessId, definition.entity) : list.count());
    if (!withTotal) return { rows: await page(), definitionsVersion };
    const [rows, count] = this.options.parallelQueries ? await Promise.all([page(), total()]) : [await page(), await total()];
    return { rows, total: count, definitionsVersion };
  }

  /** Whether list() can read the definition version with the page (withDefinitionsVersion): its SQL lists. */
  get readsDefinitionsVersion(): boolean {
    return this.options.devices.listSql;
  }

  /** D13: the page and the count as statements of list-sql.ts on the driver. */
  private sqlList(definition: EntityDefinition, businessId: string, query: PageQuery): { page(): Promise<Row[]>; count(): Promise<number> } {
    const params = new SqlParams();
    const after = query.afterKey === undefined ? undefined : { orderBy: query.orderBy, key: query.afterKey };
    const customRanges = this.options.devices.customRanges;
    const where = listWhereSql(definition, params, businessId, query.deleted, query.filter, after, query.custom, customRanges);
    return {
      page: async () => {
        const columns = [...Object.keys(definition.columns), CUSTOM_FIELDS_PROPERTY].map((name) => `"${name}"`);
        const custom = customSortOf(query.orderBy, query.custom);
        const versionColumn = (placeholder: string) =>
          `, (SELECT "version" FROM "records"."CustomFieldVersion" WHERE "businessId" = ${placeholder}::uuid) AS "${DEFINITIONS_VERSION_COLUMN}"`;
        let sql: string;
        let values: unknown[];
        if (custom) {
          // A sort on one custom field reads its sort values (custom-sort-list.ts), with parameters of its own.
          const own = new SqlParams();
          const version = query.withDefinitionsVersion ? versionColumn(own.add(businessId)) : "";
          sql = customSortPageSql({ ...query, definition, businessId, custom: query.custom!, sort: custom, columns, customRanges }, own, version);
          values = own.values;
        } else {
          values = params.values;
          let version = "";
          if (query.withDefinitionsVersion) {
            // Its own parameter at the end: the count statement shares the others and must not carry it.
            values = [...params.values, businessId];
            version = versionColumn(`$${values.length}`);
          }
          // take and skip are integers the parser bounded; everything from the client is a parameter.
          sql = `SELECT ${columns.join(", ")}${version} FROM ${definition.table} WHERE ${where} ORDER BY ${orderBySql(query.orderBy, query.custom)} LIMIT ${query.take + 1} OFFSET ${query.skip}`;
        }
        const rows = await this.options.run(sql, values);
        // The driver returns NUMERIC as exact text; Prisma as a Decimal. Both read the same from here on.
        for (const name of decimalColumns(definition)) {
          for (const row of rows) if (typeof row[name] === "string") row[name] = new DecimalText(row[name] as string);
        }
        return rows;
      },
      count: async () => {
        const own = new SqlParams();
        // The usual count's WHERE carries a cursor's keyset too; this one never does.
        const fromSortValues =
          this.options.devices.customCounts && query.afterKey === undefined
            ? customEqualityCountSql(definition, own, businessId, query.deleted, query.filter, query.custom)
            : undefined;
        const rows = fromSortValues
          ? await this.options.run(fromSortValues, own.values)
          : await this.options.run(`SELECT count(*) AS "total" FROM ${definition.table} WHERE ${where}`, params.values);
        return Number(rows[0]?.["total"] ?? 0);
      },
    };
  }

  /** D13 off: the query language's Prisma arguments (the specification list-sql.ts is tested against). */
  private prismaList(definition: EntityDefinition, businessId: string, query: PageQuery): { page(): Promise<Row[]>; count(): Promise<number> } {
    const spec = this.specs.get(definition.entity)!;
    const uuidColumns = new Set(
      Object.entries(definition.columns)
        .filter(([, column]) => column.uuid)
        .map(([name]) => name),
    );
    const conditions: object[] = [{ businessId, ...trashWhere(query.deleted) }, guardUuidFilters(toPrismaWhere(query.filter, spec), uuidColumns)];
    if (query.afterKey !== undefined) conditions.push(keysetWhere(definition, query.orderBy, query.afterKey));
    const where = { AND: conditions };
    const delegate = delegateOf(this.options.prisma, definition.delegate);
    return {
      page: () => delegate.findMany({ where, orderBy: toPrismaOrderBy([...query.orderBy]), take: query.take + 1, skip: query.skip }),
      count: () => delegate.count({ where }),
    };
  }

  /** The page's relations and line items through Prisma, for its ids only; a record deleted between the two reads is left out. */
  private async withRelations(definition: EntityDefinition, businessId: string, page: Promise<Row[]>, relations: readonly string[]): Promise<Row[]> {
    const rows = await page;
    const include = this.includeArgs(definition, relations, businessId);
    if (!include || rows.length === 0) return rows;
    const related = await delegateOf(this.options.prisma, definition.delegate).findMany({ where: { businessId, id: { in: rows.map((row) => row["id"]) } }, include });
    const byId = new Map(related.map((row) => [row["id"], this.withoutTrashedRelations(definition, row, relations)]));
    return rows.flatMap((row) => {
      const full = byId.get(row["id"]);
      return full ? [full] : [];
    });
  }

  /** One record of the business that `deleted` reads, with its line items and `relations`, or null. */
  async one(definition: EntityDefinition, businessId: string, id: string, relations: readonly string[], deleted: DeletedMode = "exclude"): Promise<Row | null> {
    const include = this.includeArgs(definition, relations, businessId);
    const row = await delegateOf(this.options.prisma, definition.delegate).findFirst({ where: { id, businessId, ...trashWhere(deleted) }, ...(include ? { include } : {}) });
    return row && this.withoutTrashedRelations(definition, row, relations);
  }

  /**
   * A to-one relation (a contact's client) whose record is in the trash is left out, like an unknown
   * one (extensions §E5); to-many relations are filtered in their query. Only a trashed record read
   * with deleted=include|only can name a trashed client: a live one never does.
   */
  private withoutTrashedRelations(definition: EntityDefinition, row: Row, relations: readonly string[]): Row {
    for (const name of relations) {
      const related = row[name] as Row | null | undefined;
      if (definition.relations[name]!.kind === "one" && related && related["deletedAt"] != null) delete row[name];
    }
    return row;
  }

  /** Relations to load; every to-many include is filtered by business too (the FKs already keep them inside it). */
  private includeArgs(definition: EntityDefinition, relations: readonly string[], businessId: string): Record<string, unknown> | undefined {
    const include: Record<string, unknown> = { ...baseInclude(definition).include };
    for (const name of relations) {
      const relation = definition.relations[name]!;
      const target = this.options.definitions[relation.target];
      const nested = baseInclude(target);
      include[name] =
        relation.kind === "many"
          ? { where: { businessId, deletedAt: null }, orderBy: DEFAULT_ORDER, take: includedRowsToRead(this.options.includeCap), ...nested }
          : nested.include
            ? nested
            : true;
    }
    return Object.keys(include).length > 0 ? include : undefined;
  }
}

/** The trash condition of `deleted` as Prisma arguments: what trashSql (list-sql.ts) means. */
export function trashWhere(deleted: DeletedMode): { deletedAt?: null | { not: null } } {
  if (deleted === "include") return {};
  return { deletedAt: deleted === "exclude" ? null : { not: null } };
}

/** Rows strictly after `key` in `orderBy`, as Prisma arguments: what keysetSql (list-sql.ts) means, NULLs last ascending and first descending. */
function keysetWhere(definition: EntityDefinition, orderBy: readonly OrderTerm[], key: readonly unknown[]): object {
  const after = (i: number): object => {
    const term = orderBy[i]!;
    const value = key[i] ?? null;
    const last = i === orderBy.length - 1;
    const ascending = term.direction === "asc";
    if (value === null) {
      const tail = last ? { id: { in: [] } } : { AND: [{ [term.field]: null }, after(i + 1)] };
      return ascending ? tail : { OR: [{ NOT: { [term.field]: null } }, tail] };
    }
    const options: object[] = [{ [term.field]: { [ascending ? "gt" : "lt"]: value } }];
    if (ascending && (definition.columns[term.field]?.nullable ?? true)) options.push({ [term.field]: null });
    if (!last) options.push({ AND: [{ [term.field]: value }, after(i + 1)] });
    return { OR: options };
  };
  return after(0);
}

function decimalColumns(definition: EntityDefinition): string[] {
  return Object.entries(definition.columns)
    .filter(([, column]) => column.type === "decimal")
    .map(([name]) => name);
}

/** The definition version the page statement read beside its rows (0 before any definition), taken off the rows; undefined without rows or the column. */
function takeDefinitionsVersion(rows: Row[]): bigint | undefined {
  if (rows.length === 0 || !(DEFINITIONS_VERSION_COLUMN in rows[0]!)) return undefined;
  const version = rows[0]![DEFINITIONS_VERSION_COLUMN];
  for (const row of rows) delete row[DEFINITIONS_VERSION_COLUMN];
  return version === null || version === undefined ? 0n : BigInt(version as string | number | bigint);
}
