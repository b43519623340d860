// The one generic service behind all seven entities: list (page + exact total), get,
// create (record-creation.ts), update and delete, each scoped by the caller's business, each write
// committing its outbox event(s) with it. Everything entity-specific comes from the definition; what
// reaches the database is in persistence/ (record-reads.ts, record-writes.ts, record-insert.ts).
import { type AuditContext, AuditWriter } from "@crm/audit";
import { CUSTOM_FIELDS_PROPERTY, DEFAULT_INCLUDE_MAX_PER_RELATION, isUuid, type EventEnvelope, type RecordEntity, type RecordItemInput, type RecordListMeta } from "@crm/contracts";
import { errors, type ErrorDetail } from "@crm/errors";
import { paginationMeta, parseInclude, parseListQuery, parseOrderBy, parseWhere, readPagination, type QuerySpec } from "@crm/query-language";
import type { SqlRunner } from "@crm/database";
import { querySpecOf, type EntityDefinition } from "../entities";
import { totalAmount } from "../domain/money";
import { serializeRecord, type RecordView, type Row } from "../domain/record.serializer";
import { HeldValue } from "../domain/list-cursor";
import { ListCursors } from "./list-cursors";
import { ifMatchHolds, recordEtag } from "../domain/record-etag";
import { previousAttributes } from "../domain/previous-attributes";
import { capIncludedRelations } from "../domain/included-relations";
import { readableRelations, type Reader } from "../domain/relation-access";
import { type FieldSelection, parseFieldSelection, selectFields } from "../domain/field-selection";
import { type Input, itemRows, scalarData } from "../domain/record-input";
import { buildEnvelope } from "../persistence/outbox.writer";
import type { PrismaClient, Tx } from "../persistence/prisma";
import { type ReadDevices, RecordReads, statementRunner } from "../persistence/record-reads";
import type { CreateClaim } from "../persistence/idempotent-create";
import { inTransaction, lockedRecord, updateRow } from "../persistence/record-writes";
import { syncSortValues } from "../persistence/custom-field-sort";
import { trashRecord } from "../persistence/trash-writes";
import { parseDeletedMode } from "../domain/deleted-mode";
import type { CustomFieldsShaper } from "../domain/record.serializer";
import { customFieldWrite } from "../domain/custom-field-values";
import { type BusinessCustomFields, type CustomFieldCache, customFieldsOf, shapedFields } from "./custom-field-cache";
import { checkClientReference } from "./client-references";
import { type Created, RecordCreation } from "./record-creation";
import { uniqueTaken } from "../domain/unique-conflicts";
import { customFieldKey, customFieldTypes, isCustomSortValue, withCustomFields } from "../domain/custom-field-query";
import { dropUniqueValues, isUniqueViolation, replaceUniqueValues, takenUniqueValue, type UniqueValue } from "../persistence/custom-field-unique";

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
   * for the list's statements and the one-statement creates (D13, D14).
   */
  sql: Pick<SqlRunner, "query">;
  /** Tuning devices to turn off (docs/performance.md; config.ts reads them from the environment): all on by default. */
  devices?: Partial<RecordDevices>;
  /** Writes every write's audit entries (extensions §E7) in its transaction; a test may give one with its own clock. */
  audit?: AuditWriter;
  /** Each business's custom field definitions (extensions §E4), current on every use. */
  customFields: CustomFieldCache;
}

/** The tuning devices of the records path (docs/performance.md), each on unless turned off. */
export interface RecordDevices extends ReadDevices {
  /** D14: a record without line items, its event and its count as one statement (record-insert.ts); off: the transaction invoices use. */
  oneStatementCreates: boolean;
  /** D34: lists and one-statement creates start from the kept definitions and confirm them in their statement; off: a version read first. */
  keptDefinitions: boolean;
}

/** List parameters a cursor already carries. */
const CURSOR_EXCLUSIVE_PARAMETERS = ["page", "where", "orderBy"] as const;

export class RecordService {
  private readonly cursors: ListCursors;
  private readonly reads: RecordReads;
  private readonly creation: RecordCreation;
  private readonly specs = new Map<RecordEntity, QuerySpec>();
  private readonly audit: AuditWriter;
  private readonly keptDefinitions: boolean;

  constructor(private readonly options: RecordServiceOptions) {
    this.audit = options.audit ?? new AuditWriter("records");
    const devices: RecordDevices = {
      listSql: true,
      countSlots: true,
      customRanges: true,
      customCounts: true,
      oneStatementCreates: true,
      keptDefinitions: true,
      ...options.devices,
    };
    this.keptDefinitions = devices.keptDefinitions;
    const run = statementRunner(options.sql);
    this.cursors = new ListCursors(options.cursorSecret, run);
    this.reads = new RecordReads({
      prisma: options.prisma,
      definitions: options.definitions,
      run,
      includeCap: this.includeCap,
      parallelQueries: options.parallelQueries ?? false,
      devices,
    });
    this.creation = new RecordCreation({
      prisma: options.prisma,
      definitions: options.definitions,
      run,
      reads: this.reads,
      audit: this.audit,
      oneStatementCreates: devices.oneStatementCreates,
      keptDefinitions: devices.keptDefinitions,
      customFields: options.customFields,
      onCommitted: options.onCommitted,
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
    // The business's custom fields are fields of its lists (extensions §E4): no other business's definitions apply.
    // A query that names none needs them only to shape the rows: the kept copy is a guess, and the page
    // statement reads the version the rows go with (D34), so no statement of its own reads it.
    const guess = this.keptDefinitionsFor(businessId, query);
    const custom = guess ?? (await this.customFieldsOf(businessId));
    const rules = custom.rules(definition.entity);
    const parsed = parseListQuery(query, withCustomFields(this.specOf(definition), rules));
    const deleted = parseDeletedMode(query["deleted"]);
    const { relations, selection } = this.readPlan(definition, query, reader, custom, parsed.include);
    const { rows, total, definitionsVersion } = await this.reads.list(
      definition,
      businessId,
      {
        deleted,
        filter: parsed.where,
        orderBy: parsed.orderBy,
        take: parsed.take,
        skip: parsed.skip,
        custom: customFieldTypes(rules),
        withDefinitionsVersion: guess !== undefined,
      },
      relations,
      true,
    );
    // An empty page has nothing to shape (and no version).
    const shaping = guess === undefined || definitionsVersion === undefined ? custom : shapedFields(await this.options.customFields.atVersion(businessId, definitionsVersion));
    const cursor = { where: query["where"] as string | undefined, orderBy: query["orderBy"] as string | undefined, deleted };
    return {
      data: this.views(definition, rows, parsed.take, selection, shaping.shaper),
      meta: {
        ...paginationMeta(total!, parsed.page, parsed.perPage),
        nextCursor: await this.cursors.next(definition.entity, businessId, cursor, parsed.orderBy, rows, parsed.take),
      },
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
    // A walk stays in the mode it started in: `deleted` beside a cursor may only repeat it.
    if (query["deleted"] !== undefined && parseDeletedMode(query["deleted"]) !== state.deleted) {
      throw errors.validationFailed([{ path: "deleted", message: `The cursor continues a deleted=${state.deleted} list; send the same deleted or none` }]);
    }
    // The cursor's where and orderBy are read against the definitions as they are now: a custom field
    // archived since the walk began is refused (400019 / 400011) like in a first page.
    const custom = await this.customFieldsOf(businessId);
    const rules = custom.rules(definition.entity);
    const listSpec = withCustomFields(spec, rules);
    const filter = state.where === undefined ? undefined : parseWhere(state.where, listSpec);
    const orderBy = parseOrderBy(state.orderBy, listSpec);
    if (state.key.length !== orderBy.length) throw errors.invalidQuery(undefined, { cause: "cursor: key does not match its order" });
    const types = customFieldTypes(rules);
    orderBy.forEach((term, i) => {
      const key = customFieldKey(term.field);
      // A held value stands for a text (list-cursor.ts).
      if (key !== undefined && !isCustomSortValue(types.get(key)!, state.key[i] instanceof HeldValue ? "" : state.key[i])) {
        throw errors.invalidQuery(undefined, { cause: `cursor: its key for ${term.field} is not of the field's type` });
      }
    });
    const include = query["include"];
    if (include !== undefined && typeof include !== "string") throw errors.invalidQuery(undefined, { cause: "include given more than once or not a string" });
    const { relations, selection } = this.readPlan(definition, query, reader, custom);
    const afterKey = await this.cursors.afterKey(businessId, state.key);
    const { rows } = await this.reads.list(
      definition,
      businessId,
      { deleted: state.deleted, filter, orderBy, take: pagination.perPage, skip: 0, afterKey, custom: types },
      relations,
      false,
    );
    return {
      data: this.views(definition, rows, pagination.perPage, selection, custom.shaper),
      meta: { perPage: pagination.perPage, nextCursor: await this.cursors.next(definition.entity, businessId, state, orderBy, rows, pagination.perPage) },
    };
  }

  private views(definition: EntityDefinition, rows: readonly Row[], take: number, selection: FieldSelection | undefined, custom: CustomFieldsShaper): RecordView[] {
    return rows.slice(0, take).map((row) => selectFields(this.withIncludeCap(definition, serializeRecord(definition, row, this.options.definitions, true, custom)), selection));
  }

  /**
   * One record: `view` whole (its ETag's source, extensions §E2.3), `answer` as `fields` selects it
   * (§E8). `query`: the request's `include`, `fields` and `deleted` (a trashed record is read only with
   * deleted=include|only, extensions §E5).
   */
  async get(definition: EntityDefinition, businessId: string, id: string, query: Record<string, unknown>, reader: Reader): Promise<{ view: RecordView; answer: RecordView }> {
    const custom = await this.customFieldsOf(businessId);
    const { relations, selection } = this.readPlan(definition, query, reader, custom);
    const deleted = parseDeletedMode(query["deleted"]);
    if (!isUuid(id)) throw errors.notFound();
    const row = await this.reads.one(definition, businessId, id, relations, deleted);
    if (!row) throw errors.notFound();
    const view = this.withIncludeCap(definition, serializeRecord(definition, row, this.options.definitions, true, custom.shaper));
    return { view, answer: selectFields(view, selection) };
  }

  /** `POST /{entity}`: one record (record-creation.ts). */
  create(definition: EntityDefinition, businessId: string, input: Input, audit: AuditContext, claim?: CreateClaim): Promise<Created> {
    return this.creation.create(definition, businessId, input, audit, claim);
  }

  /** `POST /{entity}/batch` (extensions §E2.2; record-creation.ts). */
  createMany(definition: EntityDefinition, businessId: string, inputs: readonly Input[], audit: AuditContext, claim?: CreateClaim): Promise<Created> {
    return this.creation.createMany(definition, businessId, inputs, audit, claim);
  }

  /**
   * PATCH and PUT: any subset of the writable fields. With `ifMatch` (the If-Match header) the row is
   * locked and its ETag compared first: a mismatch is 412000 and the transaction writes nothing.
   */
  async update(definition: EntityDefinition, businessId: string, id: string, input: Input, audit: AuditContext, ifMatch?: string): Promise<RecordView> {
    if (!isUuid(id)) throw errors.notFound();
    const custom = await this.customFieldsOf(businessId);
    const rules = custom.rules(definition.entity);
    // Checked before the transaction, so a bad value answers 400001 without a lock; merged inside it.
    customFieldWrite(rules, input[CUSTOM_FIELDS_PROPERTY], "update");
    let unique: Array<UniqueValue & { recordId: string; index: number }> = [];
    return this.write(businessId, audit, async (tx) => {
      // Locked and read whole: `previousAttributes` is the state this update replaced (not one a
      // concurrent update replaced meanwhile), and If-Match is checked against that same state.
      const existing = await lockedRecord(tx, definition, businessId, id);
      if (ifMatch !== undefined) this.checkIfMatch(definition, existing, ifMatch, custom.shaper);
      const before = serializeRecord(definition, existing, this.options.definitions, false, custom.shaper);
      await checkClientReference(tx, definition, businessId, input, true);
      const data = scalarData(definition, input);
      const write = customFieldWrite(rules, input[CUSTOM_FIELDS_PROPERTY], "update", existing[CUSTOM_FIELDS_PROPERTY]);
      if (write) {
        data[CUSTOM_FIELDS_PROPERTY] = write.stored;
        unique = write.uniqueValues.map((value) => ({ ...value, recordId: id, index: 0 }));
        await replaceUniqueValues(tx, businessId, definition.entity, id, write.uniqueKeys, write.uniqueValues);
      }
      const items = definition.document ? (input[definition.document.itemsRelation] as RecordItemInput[] | undefined) : undefined;
      if (definition.document && items) {
        data["totalAmount"] = totalAmount(items);
        data[definition.document.itemsRelation] = { deleteMany: {}, create: itemRows(items) };
      }
      const row = await updateRow(tx, definition, id, data);
      if (write) await syncSortValues(tx, definition, businessId, [id]);
      const view = serializeRecord(definition, row, this.options.definitions, false, custom.shaper);
      return { view, events: [buildEnvelope(definition.entity, "updated", businessId, view, previousAttributes(before, view))] };
    }).catch(async (err: unknown) => {
      // The values this update took are known only inside its transaction.
      if (unique.length === 0 || !isUniqueViolation(err)) throw err;
      const taken = await takenUniqueValue(this.options.prisma, businessId, definition.entity, unique, id);
      throw taken ? uniqueTaken(taken.key, undefined, err) : err;
    });
  }

  /**
   * Moves the record to the trash (extensions §E5) and returns it as it was; dependents per the
   * definition (live ones cascade to the trash with their events, or 409003). Restore and purge:
   * trash.service.ts.
   */
  async remove(definition: EntityDefinition, businessId: string, id: string, audit: AuditContext, ifMatch?: string): Promise<RecordView> {
    if (!isUuid(id)) throw errors.notFound();
    const custom = await this.customFieldsOf(businessId);
    return this.write(businessId, audit, async (tx) => {
      // Locked first: a concurrent insert referencing it (a new contact or invoice) waits for this
      // transaction, so nothing can slip in between the dependents check and the delete.
      const row = await lockedRecord(tx, definition, businessId, id);
      if (ifMatch !== undefined) this.checkIfMatch(definition, row, ifMatch, custom.shaper);
      const cascaded = await trashRecord(tx, this.options.definitions, definition, businessId, id, new Date());
      // A record in the trash holds no unique custom value: a live record may take it (a restore takes it back, or 409001).
      await dropUniqueValues(tx, businessId, definition.entity, [id]);
      for (const child of cascaded) await dropUniqueValues(tx, businessId, child.definition.entity, [child.row["id"] as string]);
      const events: EventEnvelope[] = cascaded.map((child) =>
        buildEnvelope(child.definition.entity, "deleted", businessId, serializeRecord(child.definition, child.row, this.options.definitions, false, custom.shaper)),
      );
      const view = serializeRecord(definition, row, this.options.definitions, false, custom.shaper);
      events.push(buildEnvelope(definition.entity, "deleted", businessId, view));
      return { view, events };
    });
  }

  /** One transaction for the change, its events and its audit entries; the relay is told once it has committed. */
  private write<View = RecordView>(businessId: string, audit: AuditContext, work: (tx: Tx) => Promise<{ view: View; events: EventEnvelope[] }>): Promise<View> {
    return inTransaction(this.options.prisma, businessId, { writer: this.audit, context: audit }, work, this.options.onCommitted);
  }

  /** If-Match against the record as it is now (locked by the caller): 412000 when it does not hold. */
  private checkIfMatch(definition: EntityDefinition, row: Row, ifMatch: string, custom: CustomFieldsShaper): void {
    const current = recordEtag(definition, serializeRecord(definition, row, this.options.definitions, false, custom));
    if (!ifMatchHolds(ifMatch, current)) throw errors.preconditionFailed();
  }

  /** The business's custom field definitions, current (custom-field-cache.ts). */
  private customFieldsOf(businessId: string): Promise<BusinessCustomFields> {
    return customFieldsOf(this.options.customFields, businessId);
  }

  /**
   * The kept copy of the business's definitions, for a list whose parameters name no custom field (so
   * they parse the same whatever the definitions) and whose page statement can read the version
   * (SQL lists); undefined otherwise, and the list reads the version first.
   */
  private keptDefinitionsFor(businessId: string, query: Record<string, unknown>): BusinessCustomFields | undefined {
    if (!this.keptDefinitions || !this.reads.readsDefinitionsVersion) return undefined;
    if (!Object.values(query).every((value) => typeof value === "string" && !value.includes(CUSTOM_FIELDS_PROPERTY))) return undefined;
    const kept = this.options.customFields.kept(businessId);
    return kept && shapedFields(kept);
  }

  private get includeCap(): number {
    return this.options.includeMaxPerRelation ?? DEFAULT_INCLUDE_MAX_PER_RELATION;
  }

  private withIncludeCap(definition: EntityDefinition, view: RecordView): RecordView {
    return capIncludedRelations(view, definition, this.includeCap);
  }

  /**
   * What a read loads and answers: the relations `include` resolves to (`parsed`, when the list query
   * parsed it already), less those `reader` may not read, 401014 for a named one (extensions §E10);
   * and the fields `fields` selects (field-selection.ts). Every read (get, list, list after a cursor)
   * takes them from here; writes return whole records without relations.
   */
  private readPlan(
    definition: EntityDefinition,
    query: Record<string, unknown>,
    reader: Reader,
    custom: BusinessCustomFields,
    parsed?: readonly string[],
  ): { relations: readonly string[]; selection?: FieldSelection } {
    const include = query["include"] as string | undefined;
    const requested = parsed ?? parseInclude(include, this.specOf(definition));
    const relations = readableRelations(definition, requested, include, reader);
    const customKeys = new Set(
      custom
        .rules(definition.entity)
        .filter((rule) => !rule.isArchived)
        .map((rule) => rule.key),
    );
    return { relations, selection: parseFieldSelection(definition, this.options.definitions, query["fields"], requested, relations, customKeys) };
  }
}
