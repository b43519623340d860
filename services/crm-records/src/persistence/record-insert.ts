// A create of a record without line items as ONE statement: the record, its event in the outbox, its
// audit entry (extensions §E7) and its custom field sort values (custom-field-sort.ts) as data-modifying
// CTEs, the business's record count as the statement itself. A single statement is atomic on its own
// (all its rows commit together or none do), so it needs no BEGIN/COMMIT and costs one round trip
// where an interactive transaction cost five or six.
//
// The statement writes every column itself (defaults from the definition, timestamps from here), so
// the row the response and the event describe is exactly the stored one without reading it back.
// Invoices and quotes (number counter, items) still go through RecordService's transaction.
import { type AuditRow, auditTable, auditValues, AUDIT_COLUMN_LIST } from "@crm/audit";
import { CUSTOM_FIELDS_PROPERTY, RECORDS_TOPIC, type EventEnvelope, type RecordEntity } from "@crm/contracts";
import { activeTraceHeaders } from "@crm/telemetry";
import type { EntityDefinition } from "../entities";
import { toJsonNumber } from "../domain/money";
import type { Row } from "../domain/record.serializer";
import { type CreateClaim, claimCte } from "./idempotent-create";
import { COUNT_SLOTS } from "./record-count";
import { insertSortValuesSql } from "./custom-field-sort";

export interface InsertStatement {
  sql: string;
  params: unknown[];
  /**
   * A one-record create's text is the same for every create of its entity, so it is prepared once
   * per connection under this name: PostgreSQL then skips parsing, analysing and (after a few runs)
   * planning the three-CTE statement (D14). Batches vary in length, so they stay unnamed.
   */
  name?: string;
}

/** `data` holds column values as Prisma would store them (dates as Date, decimals as text); returns the row a read would give. */
export function insertedRow(definition: EntityDefinition, data: Row, now: Date): Row {
  const row: Row = {};
  for (const [name, column] of Object.entries(definition.columns)) {
    let value = data[name] ?? column.default ?? null;
    if (name === "createdAt" || name === "updatedAt") value = now;
    // NUMERIC reads back as a decimal, which the serializer writes as a JSON number.
    if (column.type === "decimal" && typeof value === "string") value = toJsonNumber(value);
    row[name] = value;
  }
  row[CUSTOM_FIELDS_PROPERTY] = data[CUSTOM_FIELDS_PROPERTY] ?? {};
  return row;
}

/** The business's custom field definitions a create was built on (D34, D35). */
export interface DefinitionsAt {
  /** Their version: the statement writes only while it is still the business's (currentDefinitionsSql). */
  version: bigint;
  /**
   * Whether the entity has a sortable definition (archived ones included), so the records get sort
   * values (custom-field-sort.ts); without one, the statement has no sort values' CTE to run.
   */
  sortable: boolean;
}

/**
 * The one statement for `entry` (its row from insertedRow; decimals re-read from `data` so no precision
 * passes through a float), written only at `definitions`' version. Prepared under a name per entity and
 * shape (with or without sort values).
 */
export function insertRecordStatement(definition: EntityDefinition, entry: InsertEntry, definitions: DefinitionsAt): InsertStatement {
  return { ...insertRecordsStatement(definition, [entry], definitions), name: `records_create_${definition.entity}${definitions.sortable ? "_sorted" : ""}` };
}

/**
 * One record to insert: its column values, the row they make, its created event, its audit entry,
 * and (tracing on) the traceparent of the request that wrote it.
 */
export interface InsertEntry {
  data: Row;
  row: Row;
  event: EventEnvelope;
  audit: AuditRow;
  traceparent?: string | null;
}

/**
 * The same for several records of one business (a batch create): one multi-row INSERT each for the
 * records and their events (events in the entries' order), and the count raised by their number.
 * The events carry the first entry's traceparent when it was taken (the one request that wrote them
 * all), else the current request's. With `claim` (an Idempotency-Key) the statement claims the key for
 * these records too, and fails whole on a key claimed already.
 */
export function insertRecordsStatement(definition: EntityDefinition, entries: ReadonlyArray<InsertEntry>, definitions: DefinitionsAt, claim?: CreateClaim): InsertStatement {
  const { params, param } = statementParameters();
  const { records, sortInputs } = recordValues(definition, entries, String(definitions.version), param);
  const topic = param(RECORDS_TOPIC);
  const first = entries[0]!.traceparent;
  const traceparent = param(first !== undefined ? first : (activeTraceHeaders()?.traceparent ?? null));
  const events = entries.map(({ event }) => `(${param(event.id)}::uuid, ${topic}, ${param(event.businessId)}, ${param(JSON.stringify(event))}::json, ${traceparent})`);
  const audits = entries.map(({ audit }) => auditValues(audit, param));
  const businessId = param(entries[0]!.row["businessId"]);
  const entity = param(definition.entity satisfies RecordEntity);
  const slot = param(Math.floor(Math.random() * COUNT_SLOTS));
  const recordIds = entries.map((entry) => String(entry.row["id"]));
  const claimed = claim ? `, ${claimCte(claim, recordIds, param)}` : "";
  // The records' custom field sort values (custom-field-sort.ts): a CTE, so the create stays one statement.
  const sortValues = definitions.sortable ? `, "sortValue" AS (\n  ${insertSortValuesSql(businessId, entity, sortInputs)}\n)` : "";
  const sql = `${recordAndEventInserts(definition, records, events, audits)}${sortValues}${claimed}
INSERT INTO "records"."RecordCount" ("businessId", "entity", "slot", "count") SELECT ${businessId}::uuid, ${entity}, ${slot}, count(*)::int FROM "record"
ON CONFLICT ("businessId", "entity", "slot") DO UPDATE SET "count" = "RecordCount"."count" + EXCLUDED."count"`;
  return { sql, params };
}

/** A statement's parameter list, and `param`, which appends a value and returns its placeholder. */
function statementParameters(): { params: unknown[]; param: (value: unknown) => string } {
  const params: unknown[] = [];
  return {
    params,
    param: (value) => {
      params.push(value);
      return `$${params.length}`;
    },
  };
}

/**
 * The three CTEs every create statement opens with: the records' INSERT, their outbox events' and
 * their audit entries'. The count's upsert follows as the statement itself, so the statement answers
 * with no rows (a CTE that modifies data runs to completion whether or not anything reads it): no row
 * description and data row for the driver to parse per create (D14).
 *
 * The records' INSERT returns a row per record, which the statement itself counts: PostgreSQL runs
 * the main statement first and unread CTEs after it, so without that the count slot was locked before
 * the client (liveClientSql), the opposite order to a client's delete, which locks the client and then
 * its contacts' count slot: the two deadlocked, and the create failed.
 */
function recordAndEventInserts(definition: EntityDefinition, records: readonly string[], events: readonly string[], audits: readonly string[]): string {
  return `WITH "record" AS (
  INSERT INTO ${definition.table} (${columnNames(definition)}) VALUES ${records.join(", ")} RETURNING 1
), "event" AS (
  INSERT INTO "records"."OutboxEvent" ("id", "topic", "key", "payload", "traceparent") VALUES ${events.join(", ")}
), "audit" AS (
  INSERT INTO ${auditTable("records")} (${AUDIT_COLUMN_LIST}) VALUES ${audits.join(", ")}
)`;
}

/**
 * The client a record names, only while it is live (extensions §E5: a client in the trash is like an
 * unknown one). The composite foreign key refuses an unknown client, but a trashed client's row is still
 * there; this scalar subquery makes the reference NULL instead. Its lock waits for a delete of that
 * client in progress and then reads the row as the delete left it, so no contact slips under a client
 * that went to the trash meanwhile; and a delete that comes after waits for this insert and cascades to it.
 */
function liveClientSql(businessId: string, clientId: string): string {
  return `(SELECT c."id" FROM "records"."Client" AS c WHERE c."businessId" = ${businessId}::uuid AND c."id" = ${clientId}::uuid AND c."deletedAt" IS NULL FOR KEY SHARE)`;
}

/**
 * The business id a record is written with, only while the business's custom field definitions are still
 * at `version`, the one its values were validated and shaped with (D34). The create can so start from the
 * copy of the definitions kept in the process and confirm it in its own statement, with no version read
 * of its own; a definition committed by any replica before the statement runs makes the id NULL, which the
 * column refuses (refusedAsStaleDefinitions), and the create runs again on the definitions read afresh.
 */
function currentDefinitionsSql(businessId: string, version: string): string {
  return `(SELECT ${businessId}::uuid WHERE coalesce((SELECT v."version" FROM "records"."CustomFieldVersion" AS v WHERE v."businessId" = ${businessId}::uuid), 0) = ${version}::bigint)`;
}

/** The statement refused the business id currentDefinitionsSql made NULL (SQLSTATE 23502 on that column): the definitions moved. */
export function refusedAsStaleDefinitions(err: unknown): boolean {
  const { code, column } = (err ?? {}) as { code?: unknown; column?: unknown };
  return code === "23502" && column === "businessId";
}

/** The statement refused a client reference liveClientSql made NULL (SQLSTATE 23502 on that column): a trashed client. */
export function refusedAsTrashedClient(definition: EntityDefinition, err: unknown): boolean {
  const { code, column } = (err ?? {}) as { code?: unknown; column?: unknown };
  return code === "23502" && definition.clientReference !== undefined && column === definition.clientReference;
}

function columnNames(definition: EntityDefinition): string {
  return [...Object.keys(definition.columns), CUSTOM_FIELDS_PROPERTY].map((name) => `"${name}"`).join(", ");
}

/**
 * Each entry's `(...)` of column values (and the placeholders of its id and values, for the sort values);
 * decimals come from `data`, so no precision passes through a float. The business id is written only at
 * the definitions' version (currentDefinitionsSql). A client reference is the id of a live client of the
 * business, read `FOR KEY SHARE` (liveClientSql), or NULL, which the column refuses (refusedAsTrashedClient).
 */
function recordValues(
  definition: EntityDefinition,
  entries: ReadonlyArray<InsertEntry>,
  definitionsVersion: string,
  param: (value: unknown) => string,
): { records: string[]; sortInputs: Array<{ id: string; customFields: string }> } {
  const version = param(definitionsVersion);
  const sortInputs: Array<{ id: string; customFields: string }> = [];
  const records = entries.map(({ data, row }) => {
    let id = "";
    const values = Object.entries(definition.columns).map(([name, column]) => {
      const value = column.type === "decimal" ? (data[name] ?? column.default) : row[name];
      if (name === "businessId") return currentDefinitionsSql(param(value), version);
      if (name === definition.clientReference) return liveClientSql(param(row["businessId"]), param(value));
      const placeholder = param(value ?? null);
      if (name === "id") id = placeholder;
      return placeholder;
    });
    const customFields = param(JSON.stringify(row[CUSTOM_FIELDS_PROPERTY] ?? {}));
    values.push(customFields);
    // The sort values' CTE reads the same parameters: the id and the values are sent once.
    sortInputs.push({ id, customFields });
    return `(${values.join(", ")})`;
  });
  return { records, sortInputs };
}
