// The sort values of custom fields (extensions §E4, docs/performance.md D35): one CustomFieldSortValue
// row per record and sortable definition of its entity (every type but multiSelect, archived ones
// included: their values are kept and come back with them), so a list sorted on `customFields.<key>`
// reads one btree range instead of casting and sorting every record of the business.
//
// The rows are computed in SQL from the record's stored `customFields` and the definition's type, by
// one expression (sortColumnsSql) shared by every writer: the create statement (a CTE of
// record-insert.ts), a write of stored records (syncSortValuesSql: updates, line-item creates, a new
// definition), and the migration that backfilled them. A record in the trash keeps its rows (lists
// with deleted=include|only sort it too); a purge or a definition removed for good drops them.
import type { CustomFieldType, RecordEntity } from "@crm/contracts";
import type { EntityDefinition } from "../entities";
import type { PrismaClient, Tx } from "./prisma";

export const SORT_TABLE = `"records"."CustomFieldSortValue"`;
const DEFINITIONS = `"records"."CustomFieldDefinition"`;
/** The types sorted by `number`; every other sortable type is sorted by its text. */
const NUMBER_SORTED: readonly CustomFieldType[] = ["number", "integer", "boolean"];
const NUMERIC_TYPES = `(${NUMBER_SORTED.map((type) => `'${type}'`).join(", ")})`;
/** The one type without sort rows: a set of options has no order. */
const UNSORTED_TYPE: CustomFieldType = "multiSelect";

/**
 * The longest text a row holds, in bytes: a btree entry must fit about 2,700 bytes, and a longText of
 * 65,536 characters (or a text of 1,000 CJK ones) that does not compress would not. Those rows hold
 * `LONG_TEXT` in `number` and '' in `text`, and their order is read from the record's own value
 * (custom-sort-list.ts, custom-field-range.ts): no prefix of a text is sure to compare like the text
 * in every collation, so none is stored as if it did.
 */
export const WHOLE_TEXT_BYTES = 2000;
/** `number` of a text-sorted value longer than WHOLE_TEXT_BYTES (a value held whole has 0). */
export const LONG_TEXT = 1;

/**
 * absent, number, text of the value of definition `d` in the jsonb `customFields`: a number as
 * numeric, a boolean as 0 or 1 (false before true), anything else as its stored text, or LONG_TEXT
 * and '' past WHOLE_TEXT_BYTES; 0 and '' where the column does not apply, so no column is NULL.
 */
function sortColumnsSql(customFields: string): string {
  const value = `(${customFields} ->> d."key")`;
  const long = `octet_length(${value}) > ${WHOLE_TEXT_BYTES}`;
  return `${value} IS NULL,
    CASE WHEN ${value} IS NULL THEN 0 WHEN d."type" = 'boolean' THEN (${value})::boolean::int WHEN d."type" IN ${NUMERIC_TYPES} THEN (${value})::numeric WHEN ${long} THEN ${LONG_TEXT} ELSE 0 END,
    CASE WHEN ${value} IS NULL OR d."type" IN ${NUMERIC_TYPES} OR ${long} THEN '' ELSE ${value} END`;
}

/**
 * A stored value (its JSON value, or null) as sortColumnsSql writes its row: absent, number, text. A text
 * past WHOLE_TEXT_BYTES is written LONG_TEXT there; callers that may hold one check its length first.
 */
export function sortColumnsOf(type: CustomFieldType, value: unknown): [boolean, number | string, string] {
  if (value === null) return [true, 0, ""];
  switch (type) {
    case "boolean":
      return [false, value === true ? 1 : 0, ""];
    case "number":
    case "integer":
      return [false, value as number, ""];
    default:
      return [false, 0, String(value)];
  }
}

/**
 * `ANY(<the ids of the records of the business and entity whose value of the key is LONG_TEXT>)` (each a
 * placeholder): one range of the sort index, read once before the statement's records (an array of a
 * subquery is its init plan), so the statement finds the few records it names by id, and none when the
 * key holds no long value, whatever the planner estimates. Its statistics mix every business and key:
 * where a business held no long value, a guess of thousands made PostgreSQL read and sort 40,000 records
 * to find them (docs/performance.md D35).
 */
export function longValueRecordIds(business: string, entity: string, key: string): string {
  return `ANY(ARRAY(SELECT l."recordId" FROM ${SORT_TABLE} AS l WHERE l."businessId" = ${business}::uuid AND l."entity" = ${entity} AND l."key" = ${key} AND l."absent" = false AND l."number" = ${LONG_TEXT}))`;
}

/** Whether a type's values are sorted by `text` (and may be LONG_TEXT), not by `number`. */
export function sortedByText(type: CustomFieldType): boolean {
  return !NUMBER_SORTED.includes(type);
}

const COLUMNS = `"businessId", "entity", "key", "recordId", "absent", "number", "text"`;

/** A definition whose values have sort rows: every type but UNSORTED_TYPE. */
export function isSortable(definition: { type: CustomFieldType }): boolean {
  return definition.type !== UNSORTED_TYPE;
}

/** The entity's sortable definitions of the business, as `d`. */
function definitionsJoin(businessId: string, entity: string): string {
  return `${DEFINITIONS} AS d ON d."businessId" = ${businessId}::uuid AND d."entity" = ${entity} AND d."type" <> '${UNSORTED_TYPE}'`;
}

/**
 * A CTE body inserting the rows of records being created in the same statement (which the statement
 * cannot read back): `records` pairs each new record's id with its customFields, both placeholders.
 */
export function insertSortValuesSql(businessId: string, entity: string, records: ReadonlyArray<{ id: string; customFields: string }>): string {
  const values = records.map((record) => `(${record.id}::uuid, ${record.customFields}::jsonb)`).join(", ");
  return `INSERT INTO ${SORT_TABLE} (${COLUMNS})
  SELECT ${businessId}::uuid, ${entity}, d."key", v."id", ${sortColumnsSql(`v."customFields"`)}
  FROM (VALUES ${values}) AS v ("id", "customFields") JOIN ${definitionsJoin(businessId, entity)}`;
}

/**
 * Sets the rows of stored records from their `customFields` as they are now: `$1` the business,
 * `$2` the entity, `$3` the records' ids, or NULL for all of them; `$4` one definition's key, or NULL
 * for every one. `missingOnly` adds only the rows that do not exist yet and leaves the others as they are.
 * It lets ON CONFLICT find them (a primary-key probe per record), never a NOT EXISTS: right after a
 * definition wrote a row per record the table's statistics know none of them, and the planner answered
 * that anti-join with an index range scan per record (O(records²): 465 s at 100,000 clients, 1.1 s so).
 */
export function syncSortValuesSql(definition: EntityDefinition, missingOnly = false): string {
  const onConflict = missingOnly ? `DO NOTHING` : `DO UPDATE SET "absent" = EXCLUDED."absent", "number" = EXCLUDED."number", "text" = EXCLUDED."text"`;
  return `INSERT INTO ${SORT_TABLE} (${COLUMNS})
  SELECT r."businessId", $2, d."key", r."id", ${sortColumnsSql(`r."customFields"`)}
  FROM ${definition.table} AS r JOIN ${definitionsJoin("$1", "$2")} AND ($4::text IS NULL OR d."key" = $4::text)
  WHERE r."businessId" = $1::uuid AND ($3::uuid[] IS NULL OR r."id" = ANY($3::uuid[]))
  ON CONFLICT ("businessId", "entity", "recordId", "key") ${onConflict}`;
}

/** The rows of `recordIds` (or with `key`, of that definition only) from their stored values. */
export async function syncSortValues(tx: Tx, definition: EntityDefinition, businessId: string, recordIds: readonly string[] | null, key: string | null = null): Promise<void> {
  if (recordIds !== null && recordIds.length === 0) return;
  await tx.$executeRawUnsafe(syncSortValuesSql(definition), businessId, definition.entity, recordIds === null ? null : [...recordIds], key);
}

/** How long a new definition waits for the transactions open at its commit (settleNewDefinition). */
const SETTLE_WAIT_MS = 5_000;
const SETTLE_POLL_MS = 20;

/**
 * After a new definition commits. A create whose statement began before that commit wrote no row for
 * it (the definition was not in its snapshot), and the definition's own rows (syncSortValues in its
 * transaction) could not include that record (not committed yet): it would sort nowhere on the new
 * key. So wait until every transaction of this database open at the commit has ended, as CREATE INDEX
 * CONCURRENTLY waits for older snapshots (each holds its virtual transaction id's lock until it ends),
 * then give the records still without a row theirs. Bounded: past SETTLE_WAIT_MS, what has committed
 * by then is settled. Returns how many records it gave a row (0 unless a create raced the definition).
 */
export async function settleNewDefinition(prisma: PrismaClient, definition: EntityDefinition, businessId: string, field: { key: string; type: CustomFieldType }): Promise<number> {
  if (!isSortable(field)) return 0;
  const key = field.key;
  const open = await prisma.$queryRawUnsafe<Array<{ vxid: string }>>(
    `SELECT l."virtualxid" AS "vxid" FROM pg_locks AS l JOIN pg_stat_activity AS a ON a."pid" = l."pid"
     WHERE l."locktype" = 'virtualxid' AND l."granted" AND l."pid" <> pg_backend_pid() AND a."datname" = current_database()`,
  );
  const waiting = open.map((row) => row.vxid);
  for (const deadline = Date.now() + SETTLE_WAIT_MS; waiting.length > 0 && Date.now() < deadline; ) {
    const [still] = await prisma.$queryRawUnsafe<Array<{ open: number }>>(
      `SELECT count(*)::int AS "open" FROM pg_locks WHERE "locktype" = 'virtualxid' AND "virtualxid" = ANY($1::text[])`,
      waiting,
    );
    if (!still || still.open === 0) break;
    await new Promise((resolve) => setTimeout(resolve, SETTLE_POLL_MS));
  }
  return prisma.$executeRawUnsafe(syncSortValuesSql(definition, true), businessId, definition.entity, null, key);
}

/** Purged records sort nowhere any more. */
export async function dropSortValues(tx: Tx, businessId: string, entity: RecordEntity, recordIds: readonly string[]): Promise<void> {
  if (recordIds.length === 0) return;
  await tx.$executeRawUnsafe(`DELETE FROM ${SORT_TABLE} WHERE "businessId" = $1::uuid AND "entity" = $2 AND "recordId" = ANY($3::uuid[])`, businessId, entity, [...recordIds]);
}

/** A definition removed for good: its rows go with it. */
export async function dropSortValuesOfKey(tx: Tx, businessId: string, entity: RecordEntity, key: string): Promise<void> {
  await tx.$executeRawUnsafe(`DELETE FROM ${SORT_TABLE} WHERE "businessId" = $1::uuid AND "entity" = $2 AND "key" = $3`, businessId, entity, key);
}
