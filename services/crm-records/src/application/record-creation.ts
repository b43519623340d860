// Creates of records (`POST /{entity}` and `/{entity}/batch`): one path for both, every record or
// none, each with its own created event and audit entry, in the inputs' order. A record without line
// items goes as one statement (record-insert.ts, D14); invoices and quotes (a number range and their
// items), records with unique custom values and the devices-off path go through one transaction. An
// Idempotency-Key is claimed by the same statement or transaction; a key claimed already answers what
// its first run created (replay).
import type { AuditContext, AuditWriter } from "@crm/audit";
import { CUSTOM_FIELDS_PROPERTY, type RecordEntity, type RecordItemInput, uuidv7 } from "@crm/contracts";
import { errors, isAppError } from "@crm/errors";
import type { EntityDefinition } from "../entities";
import { customFieldWrite, type CustomFieldWrite } from "../domain/custom-field-values";
import { totalAmount } from "../domain/money";
import { recordAuditChange } from "../domain/record-audit";
import { type Input, itemRows, itemScoped, scalarData, unknownClient } from "../domain/record-input";
import { serializeRecord, type RecordView } from "../domain/record.serializer";
import { checkBatchUnique, uniqueTaken } from "../domain/unique-conflicts";
import { insertUniqueValues, isUniqueViolation, takenUniqueValue, type UniqueValue } from "../persistence/custom-field-unique";
import { nextDocumentNumbers } from "../persistence/document-number";
import { type CreateClaim, claimedCreate, claimInTransaction, isClaimTaken } from "../persistence/idempotent-create";
import { buildEnvelope } from "../persistence/outbox.writer";
import { isForeignKeyViolation, type PrismaClient, type Tx } from "../persistence/prisma";
import { adjustRecordCount } from "../persistence/record-count";
import { insertedRow, insertRecordsStatement, insertRecordStatement, refusedAsStaleDefinitions, refusedAsTrashedClient } from "../persistence/record-insert";
import type { RecordReads, RunStatement } from "../persistence/record-reads";
import { insertRow, inTransaction } from "../persistence/record-writes";
import { isSortable, syncSortValues } from "../persistence/custom-field-sort";
import { checkClientReference, checkClientReferences } from "./client-references";
import type { BusinessDefinitions } from "../persistence/custom-field.store";
import { type BusinessCustomFields, type CustomFieldCache, shapedFields } from "./custom-field-cache";

/** What a create answers: the records, and whether they were created by an earlier request with the same Idempotency-Key. */
export interface Created {
  views: RecordView[];
  replayed: boolean;
}

export interface RecordCreationOptions {
  prisma: PrismaClient;
  definitions: Readonly<Record<RecordEntity, EntityDefinition>>;
  /** The driver's statements (D14's one-statement creates). */
  run: RunStatement;
  /** For a replay: the records an earlier create made, as they are now. */
  reads: RecordReads;
  audit: AuditWriter;
  /** D14 on (the default) or off: the transaction invoices use. */
  oneStatementCreates: boolean;
  /** D34 on (the default): start from the kept definitions; off: read their version first. */
  keptDefinitions: boolean;
  customFields: CustomFieldCache;
  /** Called after every committed create (the outbox relay's kick). */
  onCommitted?: () => void;
}

/** How a create checks its client references, and names one a foreign key refused after the check. */
interface ClientCheck {
  /** `inStatement`: the one-statement create, whose statement itself refuses an unknown or trashed client (record-insert.ts). */
  check(db: PrismaClient | Tx, inStatement: boolean): Promise<void>;
  refused(err: unknown): Promise<never>;
}

/** One create, single or batch, as the one path takes it. */
interface CreateRequest {
  definition: EntityDefinition;
  businessId: string;
  inputs: readonly Input[];
  /** Each record's column values, id and business included. */
  data: readonly Input[];
  /** Each record's custom values as stored, and the unique ones it takes. */
  writes: readonly CustomFieldWrite[];
  clients: ClientCheck;
  /** Names an item's problems (`items.<i>.<field>` in a batch, the field alone for one record). */
  scoped: <T>(index: number, step: () => T) => T;
  custom: BusinessCustomFields;
  /** Who asked, for the audit entries. */
  audit: AuditContext;
  /** The Idempotency-Key, if sent. */
  claim?: CreateClaim;
}

type UniqueClaim = UniqueValue & { recordId: string; index: number };

/** The definitions a create was built on are not the business's any more: build it again on the current ones. */
class StaleDefinitions extends Error {}

/** A 4xx answer: a kept copy of the definitions that is behind may be why (a key defined since is unknown to it). */
function isRefusal(err: unknown): boolean {
  return isAppError(err) && err.status < 500;
}

/** Reads of the definitions one create makes at most while they keep changing under it. */
const MAX_DEFINITION_READS = 3;

function refusedClient(cause: unknown) {
  return errors.validationFailed([{ path: "clientId", message: "Unknown client" }], { cause });
}

export class RecordCreation {
  constructor(private readonly options: RecordCreationOptions) {}

  /** `POST /{entity}`: one record; problems are named by field (`clientId`, `dueDate`). `claim`: its Idempotency-Key, if sent; `audit`: who asked, for its audit entry. */
  async create(definition: EntityDefinition, businessId: string, input: Input, audit: AuditContext, claim?: CreateClaim): Promise<Created> {
    const clients: ClientCheck = {
      // In the one-statement create the statement is the lookup: the composite foreign key (businessId,
      // clientId) refuses another business's client and an unknown one, its live-client subquery a
      // trashed one. A transaction looks the client up (and locks it) itself.
      check: (db, inStatement) => checkClientReference(db, definition, businessId, input, !inStatement),
      refused: (err) => Promise.reject(refusedClient(err)),
    };
    const id = uuidv7();
    return this.insert(businessId, (custom) => ({
      definition,
      businessId,
      inputs: [input],
      data: [{ ...scalarData(definition, input), id, businessId }],
      writes: [customFieldWrite(custom.rules(definition.entity), input[CUSTOM_FIELDS_PROPERTY], "create")!],
      clients,
      scoped: (_, step) => step(),
      custom,
      audit,
      claim,
    }));
  }

  /** `POST /{entity}/batch` (extensions §E2.2): every problem is named by its item (`items.<i>.<field>`), client references included. */
  async createMany(definition: EntityDefinition, businessId: string, inputs: readonly Input[], audit: AuditContext, claim?: CreateClaim): Promise<Created> {
    // Ids in the items' order, so "newest first" lists the batch's last item first (they share createdAt).
    const ids = inputs.map(() => uuidv7()).sort();
    const clients: ClientCheck = {
      check: (db) => checkClientReferences(db, definition, businessId, inputs),
      // A client deleted since the check: name it as the check would have.
      refused: async () => {
        await checkClientReferences(this.options.prisma, definition, businessId, inputs);
        throw unknownClient();
      },
    };
    return this.insert(businessId, (custom) => ({
      definition,
      businessId,
      inputs,
      data: inputs.map((input, i) => ({ ...itemScoped(i, () => scalarData(definition, input)), id: ids[i]!, businessId })),
      writes: inputs.map((input, i) => itemScoped(i, () => customFieldWrite(custom.rules(definition.entity), input[CUSTOM_FIELDS_PROPERTY], "create")!)),
      clients,
      scoped: itemScoped,
      custom,
      audit,
      claim,
    }));
  }

  /**
   * The one create path, on the business's custom field definitions (D34): the copy kept in the process
   * when there is one, which the one-statement create confirms in its own statement and a transaction
   * with a version read first; read afresh when there is none, or when the kept copy turns out to be
   * behind (the statement refused it, or a refusal of the input may come from it). A key claimed
   * already answers what its first run created.
   */
  private async insert(businessId: string, build: (custom: BusinessCustomFields) => CreateRequest): Promise<Created> {
    const cache = this.options.customFields;
    const kept = this.options.keptDefinitions ? cache.kept(businessId) : undefined;
    if (kept) {
      try {
        return await this.insertAt(kept, false, build);
      } catch (err) {
        const behind = err instanceof StaleDefinitions || (isRefusal(err) && (await cache.business(businessId)).version !== kept.version);
        if (!behind) throw err;
      }
    }
    // A definition committed between this read and the statement: read again, a bounded number of times.
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.insertAt(await cache.business(businessId), true, build);
      } catch (err) {
        if (!(err instanceof StaleDefinitions)) throw err;
        // Definitions changing faster than a create can be built on them: a moment later it will be.
        if (attempt === MAX_DEFINITION_READS) throw errors.unavailable(undefined, { retryAfterS: 1, cause: err });
      }
    }
  }

  /** A create on `definitions`; `confirmed`: read at the version the database holds now, else the kept copy. */
  private async insertAt(definitions: BusinessDefinitions, confirmed: boolean, build: (custom: BusinessCustomFields) => CreateRequest): Promise<Created> {
    const request = build(shapedFields(definitions));
    try {
      return { views: await this.insertOnce(request, definitions.version, confirmed), replayed: false };
    } catch (err) {
      if (request.claim && isClaimTaken(err)) return { views: await this.replay(request.definition, request.claim, request.custom), replayed: true };
      throw err;
    }
  }

  /**
   * The records an earlier create with `claim`'s key made, as they are now. The same caller and request
   * only (else 409002, as the gateway answers); a record deleted since cannot be answered (409002 too).
   */
  private async replay(definition: EntityDefinition, claim: CreateClaim, custom: BusinessCustomFields): Promise<RecordView[]> {
    const first = await claimedCreate(this.options.prisma, claim);
    if (!first || first.caller !== claim.caller || first.fingerprint !== claim.fingerprint || first.entity !== claim.entity) throw errors.idempotencyKeyReused();
    const views: RecordView[] = [];
    for (const id of first.recordIds) {
      // As a create answers: the record's columns (and line items), no relations.
      const row = await this.options.reads.one(definition, claim.businessId, id, []);
      if (!row) {
        throw errors.idempotencyKeyReused([{ path: "Idempotency-Key", message: "The first request with this key completed, but a record it created was deleted since" }]);
      }
      views.push(serializeRecord(definition, row, this.options.definitions, false, custom.shaper));
    }
    return views;
  }

  private async insertOnce(request: CreateRequest, definitionsVersion: bigint, confirmed: boolean): Promise<RecordView[]> {
    const { definition, data, writes, scoped } = request;
    for (const [i, write] of writes.entries()) data[i]![CUSTOM_FIELDS_PROPERTY] = write.stored;
    // Unique custom values (extensions §E4) are rows of their own, written in the records' transaction.
    const unique = writes.flatMap((write, i) => write.uniqueValues.map((value) => ({ ...value, recordId: data[i]!["id"] as string, index: i })));
    // A batch names its items (itemScoped), a single create its fields.
    const batch = scoped === itemScoped;
    checkBatchUnique(unique, batch);
    if (!definition.document && this.options.oneStatementCreates && unique.length === 0) return this.insertAsOneStatement(request, definitionsVersion);
    // A transaction reads the version before it, as every other write does.
    if (!confirmed && (await this.options.customFields.business(request.businessId)).version !== definitionsVersion) throw new StaleDefinitions();
    return this.uniqueConflicts(request, unique, batch, () => this.insertInTransaction(request, unique));
  }

  /** D14: the records, their events, audit entries and count (and the claim) as one statement. */
  private async insertAsOneStatement(request: CreateRequest, definitionsVersion: bigint): Promise<RecordView[]> {
    const { definition, businessId, data, clients, custom, audit, claim } = request;
    await clients.check(this.options.prisma, true);
    const now = new Date();
    const entries = data.map((values) => {
      const row = insertedRow(definition, values, now);
      const view = serializeRecord(definition, row, this.options.definitions, false, custom.shaper);
      const event = buildEnvelope(definition.entity, "created", businessId, view);
      return { data: values, row, view, event, audit: this.options.audit.rows(businessId, [recordAuditChange(event)], audit)[0]! };
    });
    // Sort values only for an entity with a sortable definition (D35); the statement confirms the version they were counted at.
    const definitions = { version: definitionsVersion, sortable: custom.rules(definition.entity).some(isSortable) };
    // A claimed create is rare and its text differs: unnamed, so the prepared one-record text stays as it is.
    const statement =
      entries.length === 1 && !claim ? insertRecordStatement(definition, entries[0]!, definitions) : insertRecordsStatement(definition, entries, definitions, claim);
    try {
      await this.options.run(statement.sql, statement.params, statement.name);
    } catch (err) {
      if (refusedAsStaleDefinitions(err)) throw new StaleDefinitions();
      if (isForeignKeyViolation(err) || refusedAsTrashedClient(definition, err)) await clients.refused(err);
      throw err;
    }
    this.options.onCommitted?.();
    return entries.map((entry) => entry.view);
  }

  /** One transaction: the client looked up and locked, numbers for invoices and quotes, the records with their items, unique values, count and claim. */
  private insertInTransaction(request: CreateRequest, unique: readonly UniqueClaim[]): Promise<RecordView[]> {
    const { definition, businessId, inputs, data, clients, scoped, custom, audit, claim } = request;
    const document = definition.document;
    return inTransaction(
      this.options.prisma,
      businessId,
      { writer: this.options.audit, context: audit },
      async (tx) => {
        await clients.check(tx, false);
        const numbers = document ? await nextDocumentNumbers(tx, businessId, document.numberPrefix, inputs.length) : [];
        const views: RecordView[] = [];
        for (const [i, input] of inputs.entries()) {
          const values: Input = { ...data[i] };
          if (document) {
            const items = input[document.itemsRelation] as RecordItemInput[];
            Object.assign(values, { number: numbers[i], totalAmount: totalAmount(items), [document.itemsRelation]: { create: itemRows(items) } });
          }
          const row = await scoped(i, () => insertRow(tx, definition, values));
          views.push(serializeRecord(definition, row, this.options.definitions, false, custom.shaper));
        }
        await insertUniqueValues(
          tx,
          businessId,
          definition.entity,
          unique.map(({ key, value, recordId }) => ({ key, value, recordId })),
        );
        await syncSortValues(
          tx,
          definition,
          businessId,
          views.map((view) => String(view.id)),
        );
        await adjustRecordCount(tx, businessId, definition.entity, inputs.length);
        if (claim)
          await claimInTransaction(
            tx,
            claim,
            views.map((view) => String(view.id)),
          );
        return { view: views, events: views.map((view) => buildEnvelope(definition.entity, "created", businessId, view)) };
      },
      this.options.onCommitted,
    );
  }

  /**
   * Runs a write that takes unique custom values: when the unique-values table refused one, 409001
   * naming the first value another record holds (`items.<i>.customFields.<key>` in a batch).
   */
  private async uniqueConflicts<T>(request: CreateRequest, unique: readonly UniqueClaim[], batch: boolean, work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (err) {
      if (unique.length === 0 || !isUniqueViolation(err) || isClaimTaken(err)) throw err;
      const taken = await takenUniqueValue(this.options.prisma, request.businessId, request.definition.entity, unique, unique.length === 1 ? unique[0]!.recordId : undefined);
      if (!taken) throw err;
      const index = unique.find((u) => u.key === taken.key && u.value === taken.value)!.index;
      throw uniqueTaken(taken.key, batch ? index : undefined, err);
    }
  }
}
