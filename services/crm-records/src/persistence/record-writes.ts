// What the writes of records send to the database inside their transaction: the row lock and read an
// update or delete starts with, the row written through Prisma, and the client references a create
// names (a delete's own statements are the trash's: trash-writes.ts). Records without line items are created
// by one statement instead (record-insert.ts, D14).
import type { AuditContext, AuditWriter } from "@crm/audit";
import type { EventEnvelope } from "@crm/contracts";
import { errors } from "@crm/errors";
import type { EntityDefinition } from "../entities";
import { recordAuditChanges } from "../domain/record-audit";
import type { Row } from "../domain/record.serializer";
import { appendEvents } from "./outbox.writer";
import { delegateOf, isPrismaError, type PrismaClient, type Tx } from "./prisma";
import { baseInclude } from "./record-reads";

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
 * `SELECT ... FOR UPDATE` of one live record of the business, then the record read whole; 404001 when
 * there is none (a record in the trash is none: extensions §E5). Locked first: an update's `previousAttributes` is the state it replaced, and a
 * concurrent insert referencing a record being deleted waits for the delete.
 */
export async function lockedRecord(tx: Tx, definition: EntityDefinition, businessId: string, id: string): Promise<Row> {
  // `table` is a constant of the definition; the values are bound parameters.
  const locked = await tx.$queryRawUnsafe<unknown[]>(
    `SELECT 1 FROM ${definition.table} WHERE "id" = $1::uuid AND "businessId" = $2::uuid AND "deletedAt" IS NULL FOR UPDATE`,
    id,
    businessId,
  );
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
 * Which of `ids` (lower-case UUIDs) are live clients of the business: one in the trash is like an
 * unknown one (extensions §E5). In a transaction they stay locked `FOR KEY SHARE` until it commits: a
 * delete of one in progress is waited for (and then the client is not live), a later one waits.
 */
export async function knownClients(db: PrismaClient | Tx, businessId: string, ids: readonly string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const found = await db.$queryRaw<Array<{ id: string }>>`
    SELECT "id" FROM "records"."Client" WHERE "businessId" = ${businessId}::uuid AND "id" = ANY(${[...ids]}::uuid[]) AND "deletedAt" IS NULL FOR KEY SHARE`;
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
