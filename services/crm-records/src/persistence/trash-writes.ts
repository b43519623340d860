// What the trash (extensions §E5) sends to the database inside a write's transaction: a delete that
// keeps the row with "deletedAt" set (and its client's contacts with it, marked "deletedWith" that
// client), the restore that undoes exactly that, and the purge that removes a trashed row for good.
// The count slots (record-count.ts) count live records: a delete takes its records off, a restore
// puts them back, a purge changes nothing. Raw UPDATEs leave "updatedAt" alone: moving to the trash
// and back is not an edit of the record.
import type { RecordEntity } from "@crm/contracts";
import { errors } from "@crm/errors";
import type { EntityDefinition } from "../entities";
import type { Row } from "../domain/record.serializer";
import { delegateOf, isForeignKeyViolation, type Tx } from "./prisma";
import { adjustRecordCount } from "./record-count";
import { baseInclude, DEFAULT_ORDER } from "./record-reads";
import { dropSortValues } from "./custom-field-sort";

/** The column naming the record whose delete cascaded to this one (a contact's client): schema.prisma. */
export const CASCADE_MARK_COLUMN = "deletedWith";

type Definitions = Readonly<Record<RecordEntity, EntityDefinition>>;
export type AffectedRecords = Array<{ definition: EntityDefinition; row: Row }>;

/**
 * Moves a record locked by lockedRecord to the trash, with its dependents per the definition: 409003
 * while a live `restrictDelete` dependent exists (trashed ones do not hold a delete back); live
 * `cascadeDelete` dependents go to the trash with it, marked as its. Returns those, as they were, in
 * the default order, for their events.
 */
export async function trashRecord(tx: Tx, definitions: Definitions, definition: EntityDefinition, businessId: string, id: string, now: Date): Promise<AffectedRecords> {
  for (const dependent of definition.restrictDelete ?? []) {
    const target = definitions[dependent.entity];
    const found = await delegateOf(tx, target.delegate).findFirst({ where: { businessId, [dependent.foreignKey]: id, deletedAt: null }, select: { id: true } });
    if (found) throw errors.hasDependents();
  }
  const trashed: AffectedRecords = [];
  for (const dependent of definition.cascadeDelete ?? []) {
    const target = definitions[dependent.entity];
    const children = await delegateOf(tx, target.delegate).findMany({
      where: { businessId, [dependent.foreignKey]: id, deletedAt: null },
      orderBy: DEFAULT_ORDER,
      ...baseInclude(target),
    });
    if (children.length === 0) continue;
    const count = await tx.$executeRawUnsafe(
      `UPDATE ${target.table} SET "deletedAt" = $1, "${CASCADE_MARK_COLUMN}" = $2::uuid WHERE "businessId" = $3::uuid AND "id" = ANY($4::uuid[]) AND "deletedAt" IS NULL`,
      now,
      id,
      businessId,
      children.map((child) => child["id"]),
    );
    await adjustRecordCount(tx, businessId, target.entity, -count);
    for (const row of children) trashed.push({ definition: target, row });
  }
  await tx.$executeRawUnsafe(`UPDATE ${definition.table} SET "deletedAt" = $1 WHERE "id" = $2::uuid AND "businessId" = $3::uuid`, now, id, businessId);
  await adjustRecordCount(tx, businessId, definition.entity, -1);
  return trashed;
}

/** A record of the business locked `FOR UPDATE` and read whole, live or trashed; null when there is none. */
export async function lockedAnyRecord(tx: Tx, definition: EntityDefinition, businessId: string, id: string): Promise<Row | null> {
  // `table` is a constant of the definition; the values are bound parameters.
  const locked = await tx.$queryRawUnsafe<unknown[]>(`SELECT 1 FROM ${definition.table} WHERE "id" = $1::uuid AND "businessId" = $2::uuid FOR UPDATE`, id, businessId);
  if (locked.length === 0) return null;
  return delegateOf(tx, definition.delegate).findFirst({ where: { id, businessId }, ...baseInclude(definition) });
}

/**
 * Whether the client a restored record names is live, locked `FOR KEY SHARE` until commit, so it
 * cannot move to the trash while the record comes back (that delete waits, then sees the record).
 */
export async function clientIsLive(tx: Tx, businessId: string, clientId: string): Promise<boolean> {
  const rows = await tx.$queryRawUnsafe<unknown[]>(
    `SELECT 1 FROM "records"."Client" WHERE "id" = $1::uuid AND "businessId" = $2::uuid AND "deletedAt" IS NULL FOR KEY SHARE`,
    clientId,
    businessId,
  );
  return rows.length > 0;
}

/**
 * Brings a trashed record (locked by lockedAnyRecord) back, and the `cascadeDelete` dependents its
 * delete moved to the trash with it (marked as its; not those deleted before it). Returns the record
 * and those dependents as they are now, live.
 */
export async function untrashRecord(
  tx: Tx,
  definitions: Definitions,
  definition: EntityDefinition,
  businessId: string,
  id: string,
): Promise<{ row: Row; restored: AffectedRecords }> {
  await tx.$executeRawUnsafe(`UPDATE ${definition.table} SET "deletedAt" = NULL WHERE "id" = $1::uuid AND "businessId" = $2::uuid`, id, businessId);
  await adjustRecordCount(tx, businessId, definition.entity, 1);
  const restored: AffectedRecords = [];
  for (const dependent of definition.cascadeDelete ?? []) {
    const target = definitions[dependent.entity];
    const ids = await tx.$queryRawUnsafe<Array<{ id: string }>>(
      `UPDATE ${target.table} SET "deletedAt" = NULL, "${CASCADE_MARK_COLUMN}" = NULL
       WHERE "businessId" = $1::uuid AND "${dependent.foreignKey}" = $2::uuid AND "${CASCADE_MARK_COLUMN}" = $2::uuid AND "deletedAt" IS NOT NULL RETURNING "id"`,
      businessId,
      id,
    );
    if (ids.length === 0) continue;
    await adjustRecordCount(tx, businessId, target.entity, ids.length);
    const rows = await delegateOf(tx, target.delegate).findMany({ where: { businessId, id: { in: ids.map((r) => r.id) } }, orderBy: DEFAULT_ORDER, ...baseInclude(target) });
    for (const row of rows) restored.push({ definition: target, row });
  }
  const row = await delegateOf(tx, definition.delegate).findFirst({ where: { id, businessId }, ...baseInclude(definition) });
  return { row: row!, restored };
}

/** A record a purge removed with the one it was asked to purge (for its own audit entry). */
export interface PurgedDependent {
  entity: RecordEntity;
  id: string;
}

/**
 * Removes a trashed record (locked by lockedAnyRecord) for good, with the trashed `cascadeDelete`
 * dependents that still name it (a client's contacts, whichever delete trashed them), which it
 * returns. A `restrictDelete` dependent, live or trashed, refuses it (409003): an invoice or quote
 * never goes as a side effect; purge it first. Invoice and quote numbers are not given back
 * (document-number.ts).
 */
export async function purgeRecord(tx: Tx, definitions: Definitions, definition: EntityDefinition, businessId: string, id: string): Promise<PurgedDependent[]> {
  for (const dependent of definition.restrictDelete ?? []) {
    const target = definitions[dependent.entity];
    const found = await delegateOf(tx, target.delegate).findFirst({ where: { businessId, [dependent.foreignKey]: id }, select: { id: true } });
    if (found) throw errors.hasDependents();
  }
  const purged: PurgedDependent[] = [];
  for (const dependent of definition.cascadeDelete ?? []) {
    const target = definitions[dependent.entity];
    const gone = await tx.$queryRawUnsafe<Array<{ id: string }>>(
      `DELETE FROM ${target.table} WHERE "businessId" = $1::uuid AND "${dependent.foreignKey}" = $2::uuid AND "deletedAt" IS NOT NULL RETURNING "id"`,
      businessId,
      id,
    );
    for (const row of gone) purged.push({ entity: target.entity, id: row.id });
    await dropSortValues(
      tx,
      businessId,
      target.entity,
      gone.map((row) => row.id),
    );
  }
  try {
    await tx.$executeRawUnsafe(`DELETE FROM ${definition.table} WHERE "id" = $1::uuid AND "businessId" = $2::uuid AND "deletedAt" IS NOT NULL`, id, businessId);
  } catch (err) {
    // A live dependent the checks above did not expect (ON DELETE RESTRICT is the last word).
    if (isForeignKeyViolation(err)) throw errors.hasDependents(undefined, { cause: err });
    throw err;
  }
  await dropSortValues(tx, businessId, definition.entity, [id]);
  return purged;
}
