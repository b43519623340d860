// What the writes of records send to the database inside their transaction: the row lock and read an
// update or delete starts with, the row written through Prisma, the dependents a delete cascades to
// or is refused by, and the client references a create names. Records without line items are created
// by one statement instead (record-insert.ts, D14).
import type { AuditContext, AuditWriter } from "@crm/audit";
import type { EventEnvelope, RecordEntity } from "@crm/contracts";
import { errors } from "@crm/errors";
import type { EntityDefinition } from "../entities";
import { recordAuditChanges } from "../domain/record-audit";
import type { Row } from "../domain/record.serializer";
import { appendEvents } from "./outbox.writer";
import { delegateOf, isPrismaError, type PrismaClient, type Tx } from "./prisma";
import { adjustRecordCount } from "./record-count";
import { baseInclude, DEFAULT_ORDER } from "./record-reads";

/** Who audits a write, and as whom (extensions §E7). */
export interface AuditedBy {
  writer: AuditWriter;
  context: AuditContext;
}

/**
 * One transaction for the change, its events and its audit entries (one per event: record-audit.ts);
 * `committed` runs once it has committed.
 */
export async function inTransaction<View>(
  prisma: PrismaClient,
  businessId: string,
  audit: AuditedBy,
  work: (tx: Tx) => Promise<{ view: View; events: EventEnvelope[] }>,
  committed?: () => void,
): Promise<View> {
  const { view } = await prisma.$transaction(async (tx) => {
    const result = await work(tx);
    await appendEvents(tx, result.events);
    await audit.writer.record(tx, businessId, recordAuditChanges(result.events), audit.context);
    return result;
  });
  committed?.();
  return view;
}

/**
 * `SELECT ... FOR UPDATE` of one record of the business, then the record read whole; 404001 when
 * there is none. Locked first: an update's `previousAttributes` is the state it replaced, and a
 * concurrent insert referencing a record being deleted waits for the delete.
 */
export async function lockedRecord(tx: Tx, definition: EntityDefinition, businessId: string, id: string): Promise<Row> {
  // `table` is a constant of the definition; the values are bound parameters.
  const locked = await tx.$queryRawUnsafe<unknown[]>(`SELECT 1 FROM ${definition.table} WHERE "id" = $1::uuid AND "businessId" = $2::uuid FOR UPDATE`, id, businessId);
  if (locked.length === 0) throw errors.notFound();
  const row = await delegateOf(tx, definition.delegate).findFirst({ where: { id, businessId }, ...baseInclude(definition) });
  if (!row) throw errors.notFound();
  return row;
}

/** Inserts one record (line items nested in `data`) and returns it as a read would. */
export function insertRow(tx: Tx, definition: EntityDefinition, data: Row): Promise<Row> {
  return withReferenceErrors(() => delegateOf(tx, definition.delegate).create({ data, ...baseInclude(definition) }));
}

/**
 * Updates a record locked by lockedRecord. A delete committed before the lock leaves nothing to
 * update: Prisma's P2025, which is the client's 404001, not a 500.
 */
export async function updateRow(tx: Tx, definition: EntityDefinition, id: string, data: Row): Promise<Row> {
  return withReferenceErrors(async () => {
    try {
      return await delegateOf(tx, definition.delegate).update({ where: { id }, data, ...baseInclude(definition) });
    } catch (err) {
      if (isPrismaError(err, "P2025")) throw errors.notFound(undefined, { cause: err });
      throw err;
    }
  });
}

/**
 * Deletes a record locked by lockedRecord and its dependents per the definition: 409003 while a
 * `restrictDelete` dependent exists; `cascadeDelete` dependents go first, returned in order for their events.
 */
export async function deleteRecord(
  tx: Tx,
  definitions: Readonly<Record<RecordEntity, EntityDefinition>>,
  definition: EntityDefinition,
  businessId: string,
  id: string,
): Promise<Array<{ definition: EntityDefinition; row: Row }>> {
  for (const dependent of definition.restrictDelete ?? []) {
    const target = definitions[dependent.entity];
    const found = await delegateOf(tx, target.delegate).findFirst({ where: { businessId, [dependent.foreignKey]: id }, select: { id: true } });
    if (found) throw errors.hasDependents();
  }
  const deleted: Array<{ definition: EntityDefinition; row: Row }> = [];
  for (const dependent of definition.cascadeDelete ?? []) {
    const target = definitions[dependent.entity];
    const targetDelegate = delegateOf(tx, target.delegate);
    const children = await targetDelegate.findMany({ where: { businessId, [dependent.foreignKey]: id }, orderBy: DEFAULT_ORDER, ...baseInclude(target) });
    if (children.length === 0) continue;
    const { count } = await targetDelegate.deleteMany({ where: { businessId, id: { in: children.map((child) => child["id"]) } } });
    await adjustRecordCount(tx, businessId, target.entity, -count);
    for (const row of children) deleted.push({ definition: target, row });
  }
  try {
    await delegateOf(tx, definition.delegate).delete({ where: { id } });
    await adjustRecordCount(tx, businessId, definition.entity, -1);
  } catch (err) {
    // Defence in depth: ON DELETE RESTRICT caught a dependent the checks above did not know about.
    if (isPrismaError(err, "P2003")) throw errors.hasDependents(undefined, { cause: err });
    throw err;
  }
  return deleted;
}

/** Which of `ids` (lower-case UUIDs) are clients of the business. */
export async function knownClients(db: PrismaClient | Tx, businessId: string, ids: readonly string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const found = await db.client.findMany({ where: { businessId, id: { in: [...ids] } }, select: { id: true } });
  return new Set(found.map((client) => client.id));
}

/** The composite foreign key (businessId, clientId) is the last word if the client vanished meanwhile. */
async function withReferenceErrors<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (isPrismaError(err, "P2003")) throw errors.validationFailed([{ path: "clientId", message: "Unknown client" }], { cause: err });
    throw err;
  }
}
