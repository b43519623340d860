// The one generic service behind all seven entities: list (page + exact total), get,
// create, update and delete, each scoped by the caller's business, each write committing its
// outbox event(s) in the same transaction. Everything entity-specific comes from the definition.
import { DEFAULT_INCLUDE_MAX_PER_RELATION, isUuid, uuidv7, type EventEnvelope, type RecordEntity, type RecordItemInput, type RecordListMeta } from "@crm/contracts";
import { type AppError, errors, isAppError, validationError, type ErrorDetail } from "@crm/errors";
import {
  DEFAULT_ORDER_BY,
  paginationMeta,
  parseDate,
  parseInclude,
  parseListQuery,
  parseOrderBy,
  parseWhere,
  readPagination,
  toPrismaOrderBy,
  type OrderTerm,
  type QuerySpec,
} from "@crm/query-language";
import { querySpecOf, type EntityDefinition } from "../entities";
import { DecimalText, formatScaled, ITEM_DECIMALS, toScaled, totalAmount } from "../domain/money";
import type { SqlRunner } from "@crm/database";
import { serializeRecord, type RecordView, type Row } from "../domain/record.serializer";
import { CursorCodec } from "../domain/list-cursor";
import { ifMatchHolds, recordEtag } from "../domain/record-etag";
import { previousAttributes } from "../domain/previous-attributes";
import { capIncludedRelations, includedRowsToRead } from "../domain/included-relations";
import { readableRelations, type Reader } from "../domain/relation-access";
import { nextDocumentNumber, nextDocumentNumbers } from "../persistence/document-number";
import { appendEvents, buildEnvelope } from "../persistence/outbox.writer";
import { adjustRecordCount, recordCount } from "../persistence/record-count";
import { delegateOf, isForeignKeyViolation, isPrismaError, type PrismaClient, type Tx } from "../persistence/prisma";
import { insertedRow, insertRecordsStatement } from "../persistence/record-insert";
import { CreateBatcher } from "../persistence/create-batcher";
import { activeTraceHeaders } from "@crm/telemetry";
import { listWhereSql, orderBySql, SqlParams } from "../persistence/list-sql";

export interface RecordServiceOptions {
  prisma: PrismaClient;
  definitions: Readonly<Record<RecordEntity, EntityDefinition>>;
  /** Called after every committed write (the outbox relay's kick). */
  onCommitted?: () => void;
  /** PostgreSQL: page and total on two pooled connections at once. PGlite has one connection, and its adapter stalls on concurrent queries. */
  parallelQueries?: boolean;
  /** Most related records per parent and to-many relation in a response (default 100). */
  includeMaxPerRelation?: number;
  /** Signs list cursors (list-cursor.ts); every instance serving the same businesses needs the same one. */
  cursorSecret: string;
  /**
   * The database driver itself (pg's pool, or PGlite, which queues it behind any open transaction),
   * for the list's statements and the one-statement creates: Prisma's raw query path cost ~0.9 ms
   * CPU per list call and ~0.5 ms per create more than the driver (docs/performance.md). Absent:
   * the same statements through Prisma.
   */
  sql?: Pick<SqlRunner, "query">;
  /**
   * One-record creates of an entity in flight at once (create-batcher.ts); more wait and then go as
   * one statement. Default: 1 without `parallelQueries` (PGlite runs one statement at a time anyway);
   * unbounded with it (every create its own statement, as before: on PostgreSQL the delivery bench's
   * 8 concurrent creates showed no difference, docs/performance.md).
   */
  createsInFlight?: number;
}

/** Most one-record creates written by one statement (create-batcher.ts). */
const MAX_COALESCED_CREATES = 32;

type Input = Record<string, unknown>;

const ITEMS_ORDER = { orderBy: { position: "asc" } } as const;
const DEFAULT_ORDER = toPrismaOrderBy(DEFAULT_ORDER_BY.map((term) => ({ ...term })));

function unknownClient(): AppError {
  return validationError("clientId", "Unknown client");
}

/** List parameters a cursor already carries. */
const CURSOR_EXCLUSIVE_PARAMETERS = ["page", "where", "orderBy"] as const;

/** A sort value as a cursor keeps it: timestamps as ISO text, decimals as exact text. */
function cursorValue(value: unknown): unknown {
  if (value instanceof Date) return value.toISOString();
  if (typeof value === "object" && value !== null && typeof (value as { toFixed?: unknown }).toFixed === "function") return (value as { toFixed(): string }).toFixed();
  return value ?? null;
}

export class RecordService {
  private readonly cursors: CursorCodec;
  /**
   * Runs one statement with bound parameters: the lists' and the one-statement creates' (see
   * RecordServiceOptions.sql). `name`: prepared once per connection under it (SqlRunner.query).
   */
  private readonly read: (text: string, params: unknown[], name?: string) => Promise<Row[]>;
  private readonly specs = new Map<RecordEntity, QuerySpec>();
  private readonly creates: CreateBatcher;

  constructor(private readonly options: RecordServiceOptions) {
    this.cursors = new CursorCodec(options.cursorSecret);
    const sql = options.sql;
    this.read = sql
      ? async (text, params, name) => (await sql.query<Row>(text, params, name ? { name } : undefined)).rows
      : (text, params) => options.prisma.$queryRawUnsafe<Row[]>(text, ...params);
    this.creates = new CreateBatcher({
      run: (statement) => this.read(statement.sql, statement.params, statement.name),
      inFlight: options.createsInFlight ?? (options.parallelQueries ? Number.POSITIVE_INFINITY : 1),
      maxBatch: MAX_COALESCED_CREATES,
    });
    for (const definition of Object.values(options.definitions)) {
      this.specs.set(definition.entity, querySpecOf(definition));
    }
  }

  specOf(definition: EntityDefinition): QuerySpec {
    return this.specs.get(definition.entity)!;
  }

  /**
   * A page of records: by offset (`page`, with the exact total) or after a cursor (§E2.1, no
   * total). Both read the page with one SQL statement (list-sql.ts) and one row more than asked
   * for, so `meta.nextCursor` is null exactly when nothing follows. `reader`: whose permissions the
   * relations obey (relationsFor).
   */
  async list(definition: EntityDefinition, businessId: string, query: Record<string, unknown>, reader: Reader): Promise<{ data: RecordView[]; meta: RecordListMeta }> {
    if (query["cursor"] !== undefined) return this.listAfterCursor(definition, businessId, query, reader);
    const spec = this.specOf(definition);
    const parsed = parseListQuery(query, spec);
    const relations = this.relationsFor(definition, query["include"], reader, parsed.include);
    const params = new SqlParams();
    const where = listWhereSql(definition, params, businessId, parsed.where);
    // Page and total without a transaction (in parallel where the pool allows): each is exact at
    // the moment it is read (see README, "Lists").
    const page = () => this.readPage(definition, businessId, where, params, parsed.orderBy, parsed.take, parsed.skip, relations);
    // Unfiltered: the counts every create and delete keep; filtered: count the matches.
    const count = async () => {
      if (parsed.where === undefined) return recordCount(this.read, businessId, definition.entity);
      const rows = await this.read(`SELECT count(*) AS "total" FROM ${definition.table} WHERE ${where}`, params.values);
      return Number(rows[0]?.["total"] ?? 0);
    };
    const [rows, total] = this.options.parallelQueries ? await Promise.all([page(), count()]) : [await page(), await count()];
    const cursor = { where: query["where"] as string | undefined, orderBy: query["orderBy"] as string | undefined };
    return {
      data: this.views(definition, rows, parsed.take),
      meta: { ...paginationMeta(total, parsed.page, parsed.perPage), nextCursor: this.nextCursor(definition, businessId, cursor, parsed.orderBy, rows, parsed.take) },
    };
  }

  /** `?cursor=`: the cursor's query, continued by keyset after its last record; only perPage and include may be sent beside it. */
  private async listAfterCursor(
    definition: EntityDefinition,
    businessId: string,
    query: Record<string, unknown>,
    reader: Reader,
  ): Promise<{ data: RecordView[]; meta: RecordListMeta }> {
    const spec = this.specOf(definition);
    const conflicts: ErrorDetail[] = [];
    for (const name of CURSOR_EXCLUSIVE_PARAMETERS) {
      if (query[name] !== undefined) conflicts.push({ path: name, message: `${name} cannot be combined with cursor: the cursor carries the query it continues` });
    }
    if (conflicts.length > 0) throw errors.validationFailed(conflicts);
    const { pagination, details } = readPagination({ perPage: query["perPage"] });
    if (details.length > 0) throw errors.validationFailed(details);
    const state = this.cursors.decode(query["cursor"], businessId, definition.entity);
    const filter = state.where === undefined ? undefined : parseWhere(state.where, spec);
    const orderBy = parseOrderBy(state.orderBy, spec);
    if (state.key.length !== orderBy.length) throw errors.invalidQuery(undefined, { cause: "cursor: key does not match its order" });
    const include = query["include"];
    if (include !== undefined && typeof include !== "string") throw errors.invalidQuery(undefined, { cause: "include given more than once or not a string" });
    const relations = this.relationsFor(definition, include, reader);
    const params = new SqlParams();
    const where = listWhereSql(definition, params, businessId, filter, { orderBy, key: state.key });
    const rows = await this.readPage(definition, businessId, where, params, orderBy, pagination.perPage, 0, relations);
    return {
      data: this.views(definition, rows, pagination.perPage),
      meta: { perPage: pagination.perPage, nextCursor: this.nextCursor(definition, businessId, state, orderBy, rows, pagination.perPage) },
    };
  }

  /** Up to take + 1 rows in order (the extra one only says whether more follow), with their relations when asked for. */
  private async readPage(
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
    const rows = await this.read(`SELECT ${columns} FROM ${definition.table} WHERE ${where} ORDER BY ${orderBySql(orderBy)} LIMIT ${take + 1} OFFSET ${skip}`, params.values);
    // The driver returns NUMERIC as exact text; Prisma as a Decimal. Both read the same from here on.
    for (const name of this.decimalColumns(definition)) {
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

  private decimalColumns(definition: EntityDefinition): string[] {
    return Object.entries(definition.columns)
      .filter(([, column]) => column.type === "decimal")
      .map(([name]) => name);
  }

  private views(definition: EntityDefinition, rows: readonly Row[], take: number): RecordView[] {
    return rows.slice(0, take).map((row) => this.withIncludeCap(definition, serializeRecord(definition, row, this.options.definitions, true)));
  }

  /** A cursor after the last row of the page, or null when the extra row says nothing follows. */
  private nextCursor(
    definition: EntityDefinition,
    businessId: string,
    query: { where: string | undefined; orderBy: string | undefined },
    orderBy: readonly OrderTerm[],
    rows: readonly Row[],
    take: number,
  ): string | null {
    if (rows.length <= take) return null;
    const last = rows[take - 1]!;
    return this.cursors.encode({ businessId, entity: definition.entity, where: query.where, orderBy: query.orderBy, key: orderBy.map((term) => cursorValue(last[term.field])) });
  }

  async get(definition: EntityDefinition, businessId: string, id: string, includeParam: unknown, reader: Reader): Promise<RecordView> {
    const relations = this.relationsFor(definition, includeParam, reader);
    if (!isUuid(id)) throw errors.notFound();
    const include = this.includeArgs(definition, relations, businessId);
    const row = await delegateOf(this.options.prisma, definition.delegate).findFirst({ where: { id, businessId }, ...(include ? { include } : {}) });
    if (!row) throw errors.notFound();
    return this.withIncludeCap(definition, serializeRecord(definition, row, this.options.definitions, true));
  }

  async create(definition: EntityDefinition, businessId: string, input: Input): Promise<RecordView> {
    if (!definition.document) return this.createInOneStatement(definition, businessId, input);
    return this.write(async (tx) => {
      await this.checkClientReference(tx, definition, businessId, input);
      const data: Input = { ...this.scalarData(definition, input), id: uuidv7(), businessId };
      if (definition.document) {
        const items = input[definition.document.itemsRelation] as RecordItemInput[];
        data["number"] = await nextDocumentNumber(tx, businessId, definition.document.numberPrefix);
        data["totalAmount"] = totalAmount(items);
        data[definition.document.itemsRelation] = { create: itemRows(items) };
      }
      const row = await this.withReferenceErrors(() => delegateOf(tx, definition.delegate).create({ data, ...this.baseInclude(definition) }));
      await adjustRecordCount(tx, businessId, definition.entity, 1);
      const view = serializeRecord(definition, row, this.options.definitions, false);
      return { view, events: [buildEnvelope(definition.entity, "created", businessId, view)] };
    });
  }

  /**
   * A record without line items: record, outbox event and record count in one statement
   * (record-insert.ts), shared with other such creates of the entity under load (create-batcher.ts).
   * A client reference is checked by the composite foreign key (businessId, clientId), which
   * refuses another business's client as well as an unknown one.
   */
  private async createInOneStatement(definition: EntityDefinition, businessId: string, input: Input): Promise<RecordView> {
    const field = definition.clientReference;
    if (field && input[field] !== undefined && (typeof input[field] !== "string" || !isUuid(input[field] as string))) throw unknownClient();
    const data: Input = { ...this.scalarData(definition, input), id: uuidv7(), businessId };
    const row = insertedRow(definition, data, new Date());
    const view = serializeRecord(definition, row, this.options.definitions, false);
    const event = buildEnvelope(definition.entity, "created", businessId, view);
    try {
      // The write's trace continues through the relay and the consumer (tracing on; else null).
      await this.creates.create(definition, { data, row, event, traceparent: activeTraceHeaders()?.traceparent ?? null });
    } catch (err) {
      if (isForeignKeyViolation(err)) throw errors.validationFailed([{ path: "clientId", message: "Unknown client" }], { cause: err });
      throw err;
    }
    this.options.onCommitted?.();
    return view;
  }

  /**
   * `POST /{entity}/batch` (extensions §E2.2): every record or none, each with its own created event,
   * in the inputs' order. Records without line items go in one statement (record-insert.ts), invoices
   * and quotes in one transaction with a range of numbers. Every problem is named by its item
   * (`items.<i>.<field>`), client references included, and a refusal writes nothing.
   */
  async createMany(definition: EntityDefinition, businessId: string, inputs: readonly Input[]): Promise<RecordView[]> {
    // Ids in the items' order, so "newest first" lists the batch's last item first (they share createdAt).
    const ids = inputs.map(() => uuidv7()).sort();
    const data = inputs.map((input, i) => ({ ...itemScoped(i, () => this.scalarData(definition, input)), id: ids[i]!, businessId }));
    const document = definition.document;
    if (!document) {
      await this.checkClientReferences(this.options.prisma, definition, businessId, inputs);
      const now = new Date();
      const entries = data.map((values) => {
        const row = insertedRow(definition, values, now);
        const view = serializeRecord(definition, row, this.options.definitions, false);
        return { data: values, row, view, event: buildEnvelope(definition.entity, "created", businessId, view) };
      });
      const statement = insertRecordsStatement(definition, entries);
      try {
        await this.read(statement.sql, statement.params);
      } catch (err) {
        // A client deleted since the check: name it as the check would have.
        if (isForeignKeyViolation(err)) {
          await this.checkClientReferences(this.options.prisma, definition, businessId, inputs);
          throw unknownClient();
        }
        throw err;
      }
      this.options.onCommitted?.();
      return entries.map((entry) => entry.view);
    }
    return this.write(async (tx) => {
      await this.checkClientReferences(tx, definition, businessId, inputs);
      const numbers = await nextDocumentNumbers(tx, businessId, document.numberPrefix, inputs.length);
      const delegate = delegateOf(tx, definition.delegate);
      const views: RecordView[] = [];
      for (const [i, input] of inputs.entries()) {
        const items = input[document.itemsRelation] as RecordItemInput[];
        const values: Input = { ...data[i], number: numbers[i], totalAmount: totalAmount(items), [document.itemsRelation]: { create: itemRows(items) } };
        const row = await itemScoped(i, () => this.withReferenceErrors(() => delegate.create({ data: values, ...this.baseInclude(definition) })));
        views.push(serializeRecord(definition, row, this.options.definitions, false));
      }
      await adjustRecordCount(tx, businessId, definition.entity, inputs.length);
      return { view: views, events: views.map((view) => buildEnvelope(definition.entity, "created", businessId, view)) };
    });
  }

  /**
   * PATCH and PUT: any subset of the writable fields. With `ifMatch` (the If-Match header) the row is
   * locked and its ETag compared first: a mismatch is 412000 and the transaction writes nothing.
   */
  async update(definition: EntityDefinition, businessId: string, id: string, input: Input, ifMatch?: string): Promise<RecordView> {
    if (!isUuid(id)) throw errors.notFound();
    return this.write(async (tx) => {
      const delegate = delegateOf(tx, definition.delegate);
      // Locked and read whole: `previousAttributes` is the state this update replaced (not one a
      // concurrent update replaced meanwhile), and If-Match is checked against that same state.
      await this.lockRow(tx, definition, businessId, id);
      const existing = await delegate.findFirst({ where: { id, businessId }, ...this.baseInclude(definition) });
      if (!existing) throw errors.notFound();
      if (ifMatch !== undefined) this.checkIfMatch(definition, existing, ifMatch);
      const before = serializeRecord(definition, existing, this.options.definitions, false);
      await this.checkClientReference(tx, definition, businessId, input);
      const data = this.scalarData(definition, input);
      const items = definition.document ? (input[definition.document.itemsRelation] as RecordItemInput[] | undefined) : undefined;
      if (definition.document && items) {
        data["totalAmount"] = totalAmount(items);
        data[definition.document.itemsRelation] = { deleteMany: {}, create: itemRows(items) };
      }
      const row = await this.withReferenceErrors(() => whileRecordExists(() => delegate.update({ where: { id }, data, ...this.baseInclude(definition) })));
      const view = serializeRecord(definition, row, this.options.definitions, false);
      return { view, events: [buildEnvelope(definition.entity, "updated", businessId, view, previousAttributes(before, view))] };
    });
  }

  /** Deletes and returns the record as it was; dependents per the definition (cascade with events, or 409003). */
  async remove(definition: EntityDefinition, businessId: string, id: string, ifMatch?: string): Promise<RecordView> {
    if (!isUuid(id)) throw errors.notFound();
    return this.write(async (tx) => {
      // Lock the row first: a concurrent insert referencing it (a new contact or invoice) waits for
      // this transaction, so nothing can slip in between the dependents check and the delete.
      await this.lockRow(tx, definition, businessId, id);
      const delegate = delegateOf(tx, definition.delegate);
      const row = await delegate.findFirst({ where: { id, businessId }, ...this.baseInclude(definition) });
      if (!row) throw errors.notFound();
      if (ifMatch !== undefined) this.checkIfMatch(definition, row, ifMatch);

      for (const dependent of definition.restrictDelete ?? []) {
        const target = this.options.definitions[dependent.entity];
        const found = await delegateOf(tx, target.delegate).findFirst({ where: { businessId, [dependent.foreignKey]: id }, select: { id: true } });
        if (found) throw errors.hasDependents();
      }
      const events: EventEnvelope[] = [];
      for (const dependent of definition.cascadeDelete ?? []) {
        const target = this.options.definitions[dependent.entity];
        const targetDelegate = delegateOf(tx, target.delegate);
        const children = await targetDelegate.findMany({ where: { businessId, [dependent.foreignKey]: id }, orderBy: DEFAULT_ORDER, ...this.baseInclude(target) });
        if (children.length === 0) continue;
        const { count } = await targetDelegate.deleteMany({ where: { businessId, id: { in: children.map((child) => child["id"]) } } });
        await adjustRecordCount(tx, businessId, target.entity, -count);
        for (const child of children) {
          events.push(buildEnvelope(target.entity, "deleted", businessId, serializeRecord(target, child, this.options.definitions, false)));
        }
      }
      try {
        await delegate.delete({ where: { id } });
        await adjustRecordCount(tx, businessId, definition.entity, -1);
      } catch (err) {
        // Defence in depth: ON DELETE RESTRICT caught a dependent the checks above did not know about.
        if (isPrismaError(err, "P2003")) throw errors.hasDependents(undefined, { cause: err });
        throw err;
      }
      const view = serializeRecord(definition, row, this.options.definitions, false);
      events.push(buildEnvelope(definition.entity, "deleted", businessId, view));
      return { view, events };
    });
  }

  /** One transaction for the change and its events; the relay is told once it has committed. */
  private async write<View = RecordView>(work: (tx: Tx) => Promise<{ view: View; events: EventEnvelope[] }>): Promise<View> {
    const { view } = await this.options.prisma.$transaction(async (tx) => {
      const result = await work(tx);
      await appendEvents(tx, result.events);
      return result;
    });
    this.options.onCommitted?.();
    return view;
  }

  /** `SELECT ... FOR UPDATE` of one record of the business; 404001 when there is none. */
  private async lockRow(tx: Tx, definition: EntityDefinition, businessId: string, id: string): Promise<void> {
    // `table` is a constant of the definition; the values are bound parameters.
    const locked = await tx.$queryRawUnsafe<unknown[]>(`SELECT 1 FROM ${definition.table} WHERE "id" = $1::uuid AND "businessId" = $2::uuid FOR UPDATE`, id, businessId);
    if (locked.length === 0) throw errors.notFound();
  }

  /** If-Match against the record as it is now (locked by the caller): 412000 when it does not hold. */
  private checkIfMatch(definition: EntityDefinition, row: Row, ifMatch: string): void {
    const current = recordEtag(definition, serializeRecord(definition, row, this.options.definitions, false));
    if (!ifMatchHolds(ifMatch, current)) throw errors.preconditionFailed();
  }

  private async checkClientReference(tx: Tx, definition: EntityDefinition, businessId: string, input: Input): Promise<void> {
    const field = definition.clientReference;
    if (!field || input[field] === undefined) return;
    const clientId = input[field];
    if (typeof clientId !== "string" || !isUuid(clientId)) throw unknownClient();
    const client = await tx.client.findFirst({ where: { id: clientId, businessId }, select: { id: true } });
    if (!client) throw unknownClient();
  }

  /** A batch's client references in one query; each unknown one (or another business's) named by its item. */
  private async checkClientReferences(db: PrismaClient | Tx, definition: EntityDefinition, businessId: string, inputs: readonly Input[]): Promise<void> {
    const field = definition.clientReference;
    if (!field) return;
    const wanted = inputs.map((input) => input[field]);
    const candidates = [...new Set(wanted.filter((v): v is string => typeof v === "string" && isUuid(v)).map((v) => v.toLowerCase()))];
    const found = candidates.length === 0 ? [] : await db.client.findMany({ where: { businessId, id: { in: candidates } }, select: { id: true } });
    const known = new Set(found.map((client) => client.id));
    const details = wanted.flatMap((value, i) =>
      value === undefined || (typeof value === "string" && known.has(value.toLowerCase())) ? [] : [{ path: `items.${i}.${field}`, message: "Unknown client" }],
    );
    if (details.length > 0) throw errors.validationFailed(details);
  }

  /** The composite foreign key (businessId, clientId) is the last word if the client vanished meanwhile. */
  private async withReferenceErrors<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (err) {
      if (isPrismaError(err, "P2003")) throw errors.validationFailed([{ path: "clientId", message: "Unknown client" }], { cause: err });
      throw err;
    }
  }

  /** Body fields -> column values: ISO dates to Date, decimals to exact text, items handled by the caller. */
  private scalarData(definition: EntityDefinition, input: Input): Input {
    const data: Input = {};
    const itemsField = definition.document?.itemsRelation;
    for (const [key, value] of Object.entries(input)) {
      if (key === itemsField || value === undefined) continue;
      if (definition.dateInputs?.includes(key) && typeof value === "string") {
        const date = parseDate(value);
        if (!date) throw validationError(key, "Expected an ISO 8601 date (YYYY-MM-DD) or date-time");
        data[key] = date;
      } else if (definition.decimalInputs?.includes(key) && typeof value === "number") {
        data[key] = formatScaled(toScaled(value), ITEM_DECIMALS);
      } else {
        data[key] = value;
      }
    }
    return data;
  }

  private get includeCap(): number {
    return this.options.includeMaxPerRelation ?? DEFAULT_INCLUDE_MAX_PER_RELATION;
  }

  private withIncludeCap(definition: EntityDefinition, view: RecordView): RecordView {
    return capIncludedRelations(view, definition, this.includeCap);
  }

  private baseInclude(definition: EntityDefinition): { include?: Record<string, unknown> } {
    return definition.document ? { include: { [definition.document.itemsRelation]: ITEMS_ORDER } } : {};
  }

  /**
   * The relations a read loads: what `include` resolves to (`parsed`, when the list query parsed it
   * already), less those `reader` may not read, 401014 for a named one (extensions §E10). Every read
   * that returns relations (get, list, list after a cursor) takes them from here; writes return none.
   */
  private relationsFor(definition: EntityDefinition, include: unknown, reader: Reader, parsed?: readonly string[]): readonly string[] {
    const relations = parsed ?? parseInclude(include as string | undefined, this.specOf(definition));
    return readableRelations(definition, relations, include as string | undefined, reader);
  }

  /** Relations to load; every to-many include is filtered by business too (the FKs already keep them inside it). */
  private includeArgs(definition: EntityDefinition, relations: readonly string[], businessId: string): Record<string, unknown> | undefined {
    const include: Record<string, unknown> = { ...this.baseInclude(definition).include };
    for (const name of relations) {
      const relation = definition.relations[name]!;
      const target = this.options.definitions[relation.target];
      const nested = this.baseInclude(target);
      include[name] =
        relation.kind === "many" ? { where: { businessId }, orderBy: DEFAULT_ORDER, take: includedRowsToRead(this.includeCap), ...nested } : nested.include ? nested : true;
    }
    return Object.keys(include).length > 0 ? include : undefined;
  }
}

/**
 * The read above takes no lock (an update must not wait on readers), so a delete committed between
 * it and the write leaves nothing to update: Prisma's P2025, which is the client's 404001, not a 500.
 * (remove() locks its row FOR UPDATE first, so its own delete cannot meet a vanished row.)
 */
async function whileRecordExists<T>(write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (err) {
    if (isPrismaError(err, "P2025")) throw errors.notFound(undefined, { cause: err });
    throw err;
  }
}

/** Runs one batch item's step; its validation details are renamed `items.<i>.<path>`. */
function itemScoped<T>(index: number, step: () => T): T {
  const rename = (err: unknown): never => {
    if (isAppError(err) && err.details)
      throw errors.validationFailed(
        err.details.map((d) => ({ ...d, path: `items.${index}.${d.path}` })),
        { cause: err },
      );
    throw err;
  };
  try {
    const result = step();
    return (result instanceof Promise ? result.catch(rename) : result) as T;
  } catch (err) {
    return rename(err);
  }
}

function itemRows(items: readonly RecordItemInput[]): Input[] {
  return items.map((item, position) => ({
    position,
    description: item.description,
    quantity: formatScaled(toScaled(item.quantity), ITEM_DECIMALS),
    unitPrice: formatScaled(toScaled(item.unitPrice), ITEM_DECIMALS),
  }));
}
