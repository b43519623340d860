// A create of a record without line items as ONE statement: the record and its event in the outbox
// as two data-modifying CTEs, the business's record count as the statement itself. A single
// statement is atomic on its own (all three rows commit together or none does), so it needs no
// BEGIN/COMMIT and costs one round trip where an interactive transaction cost five or six.
//
// The statement writes every column itself (defaults from the definition, timestamps from here), so
// the row the response and the event describe is exactly the stored one without reading it back.
// Invoices and quotes (number counter, items) still go through RecordService's transaction.
import { RECORDS_TOPIC, type EventEnvelope, type RecordEntity } from "@crm/contracts";
import { activeTraceHeaders } from "@crm/telemetry";
import type { EntityDefinition } from "../entities";
import { toJsonNumber } from "../domain/money";
import type { Row } from "../domain/record.serializer";
import { COUNT_SLOTS } from "./record-count";

export interface InsertStatement {
  sql: string;
  params: unknown[];
  /**
   * A one-record create's text is the same for every create of its entity, so it is prepared once
   * per connection under this name: PostgreSQL then skips parsing, analysing and (after a few runs)
   * planning the three-CTE statement, ~0.15-0.2 ms of its CPU per create (docs/performance.md,
   * "Tenth round"). Batches vary in length, so they stay unnamed.
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
  return row;
}

/** The one statement for `row` (from insertedRow; decimals re-read from `data` so no precision passes through a float). */
export function insertRecordStatement(definition: EntityDefinition, data: Row, row: Row, event: EventEnvelope, traceparent?: string | null): InsertStatement {
  return { ...insertRecordsStatement(definition, [{ data, row, event, traceparent }]), name: `records_create_${definition.entity}` };
}

/** One record to insert: its column values, the row they make, its created event, and (tracing on) the traceparent of the request that wrote it. */
export interface InsertEntry {
  data: Row;
  row: Row;
  event: EventEnvelope;
  traceparent?: string | null;
}

/**
 * The same for several records of one business (a batch create): one multi-row INSERT each for the
 * records and their events (events in the entries' order), and the count raised by their number.
 * The events carry the first entry's traceparent when it was taken (the one request that wrote them
 * all), else the current request's.
 */
export function insertRecordsStatement(definition: EntityDefinition, entries: ReadonlyArray<InsertEntry>): InsertStatement {
  const { params, param } = statementParameters();
  const records = recordValues(definition, entries, param);
  const topic = param(RECORDS_TOPIC);
  const first = entries[0]!.traceparent;
  const traceparent = param(first !== undefined ? first : (activeTraceHeaders()?.traceparent ?? null));
  const events = entries.map(({ event }) => `(${param(event.id)}::uuid, ${topic}, ${param(event.businessId)}, ${param(JSON.stringify(event))}::json, ${traceparent})`);
  const businessId = param(entries[0]!.row["businessId"]);
  const entity = param(definition.entity satisfies RecordEntity);
  const slot = param(Math.floor(Math.random() * COUNT_SLOTS));
  const count = param(entries.length);
  const sql = `${recordAndEventInserts(definition, records, events)}
INSERT INTO "records"."RecordCount" ("businessId", "entity", "slot", "count") VALUES (${businessId}::uuid, ${entity}, ${slot}, ${count}::int)
ON CONFLICT ("businessId", "entity", "slot") DO UPDATE SET "count" = "RecordCount"."count" + EXCLUDED."count"`;
  return { sql, params };
}

/**
 * Separate one-record creates of one entity, of any businesses, as one statement (create-batcher.ts):
 * each event keeps its own request's traceparent, and each business's count is raised by its number of
 * records on one random slot. The text depends only on the entity and the number of records (the
 * counts travel as arrays), so it is prepared under a name per length, a set bounded by the batcher's
 * largest batch. Count rows are upserted in business order, so two such statements running at once
 * lock them in the same order and cannot deadlock on them.
 */
export function insertCoalescedStatement(definition: EntityDefinition, entries: ReadonlyArray<InsertEntry>): InsertStatement {
  const { params, param } = statementParameters();
  const records = recordValues(definition, entries, param);
  const topic = param(RECORDS_TOPIC);
  const events = entries.map(
    ({ event, traceparent }) => `(${param(event.id)}::uuid, ${topic}, ${param(event.businessId)}, ${param(JSON.stringify(event))}::json, ${param(traceparent ?? null)})`,
  );
  const perBusiness = new Map<string, number>();
  for (const { row } of entries) {
    const businessId = row["businessId"] as string;
    perBusiness.set(businessId, (perBusiness.get(businessId) ?? 0) + 1);
  }
  const businesses = [...perBusiness.keys()].sort();
  const businessIds = param(businesses);
  const slots = param(businesses.map(() => Math.floor(Math.random() * COUNT_SLOTS)));
  const counts = param(businesses.map((businessId) => perBusiness.get(businessId)!));
  const entity = param(definition.entity satisfies RecordEntity);
  const sql = `${recordAndEventInserts(definition, records, events)}
INSERT INTO "records"."RecordCount" ("businessId", "entity", "slot", "count")
SELECT "b", ${entity}, "s", "c" FROM unnest(${businessIds}::uuid[], ${slots}::int[], ${counts}::int[]) WITH ORDINALITY AS "t" ("b", "s", "c", "n") ORDER BY "n"
ON CONFLICT ("businessId", "entity", "slot") DO UPDATE SET "count" = "RecordCount"."count" + EXCLUDED."count"`;
  return { sql, params, name: `records_create_${definition.entity}_x${entries.length}` };
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
 * The two CTEs every create statement opens with: the records' INSERT and their outbox events'. The
 * count's upsert follows as the statement itself, so the statement answers with no rows (a CTE that
 * modifies data runs to completion whether or not anything reads it): no row description and data
 * row for the driver to parse per create, about 15 µs of this process's CPU per create on
 * PostgreSQL (docs/performance.md).
 */
function recordAndEventInserts(definition: EntityDefinition, records: readonly string[], events: readonly string[]): string {
  return `WITH "record" AS (
  INSERT INTO ${definition.table} (${columnNames(definition)}) VALUES ${records.join(", ")}
), "event" AS (
  INSERT INTO "records"."OutboxEvent" ("id", "topic", "key", "payload", "traceparent") VALUES ${events.join(", ")}
)`;
}

function columnNames(definition: EntityDefinition): string {
  return Object.keys(definition.columns)
    .map((name) => `"${name}"`)
    .join(", ");
}

/** Each entry's `(...)` of column values; decimals come from `data`, so no precision passes through a float. */
function recordValues(definition: EntityDefinition, entries: ReadonlyArray<InsertEntry>, param: (value: unknown) => string): string[] {
  return entries.map(({ data, row }) => {
    const values = Object.entries(definition.columns).map(([name, column]) => {
      const value = column.type === "decimal" ? (data[name] ?? column.default) : row[name];
      return param(value ?? null);
    });
    return `(${values.join(", ")})`;
  });
}
