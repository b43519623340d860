// The values of `unique` custom fields (extensions §E4): one CustomFieldUniqueValue row per value a
// live record holds, written in the record's transaction; the table's primary key (business, entity,
// key, value) refuses a second holder, also between concurrent writes, so no read-then-write decides.
import type { RecordEntity } from "@crm/contracts";
import { isPrismaError, type PrismaClient, type Tx } from "./prisma";

export interface UniqueValue {
  key: string;
  /** The value's JSON text (uniqueValueText). */
  value: string;
}

/** Sets the record's values of `keys` to `values` (each of them one of `keys`). */
export async function replaceUniqueValues(
  tx: Tx,
  businessId: string,
  entity: RecordEntity,
  recordId: string,
  keys: readonly string[],
  values: readonly UniqueValue[],
): Promise<void> {
  if (keys.length > 0) await tx.customFieldUniqueValue.deleteMany({ where: { businessId, entity, recordId, key: { in: [...keys] } } });
  if (values.length > 0) await tx.customFieldUniqueValue.createMany({ data: values.map((v) => ({ businessId, entity, recordId, key: v.key, value: v.value })) });
}

/** Several new records' values at once (a create or a batch). */
export async function insertUniqueValues(tx: Tx, businessId: string, entity: RecordEntity, rows: ReadonlyArray<UniqueValue & { recordId: string }>): Promise<void> {
  if (rows.length > 0) await tx.customFieldUniqueValue.createMany({ data: rows.map((row) => ({ businessId, entity, ...row })) });
}

/** Deleted records hold no value any more. */
export async function dropUniqueValues(tx: Tx, businessId: string, entity: RecordEntity, recordIds: readonly string[]): Promise<void> {
  if (recordIds.length > 0) await tx.customFieldUniqueValue.deleteMany({ where: { businessId, entity, recordId: { in: [...recordIds] } } });
}

/** The first of `candidates` another record than `recordId` holds, or undefined. */
export async function takenUniqueValue(
  prisma: PrismaClient,
  businessId: string,
  entity: RecordEntity,
  candidates: readonly UniqueValue[],
  recordId?: string,
): Promise<UniqueValue | undefined> {
  if (candidates.length === 0) return undefined;
  const held = await prisma.customFieldUniqueValue.findMany({
    where: { businessId, entity, OR: candidates.map((c) => ({ key: c.key, value: c.value })) },
    select: { key: true, value: true, recordId: true },
  });
  return candidates.find((c) => held.some((h) => h.key === c.key && h.value === c.value && h.recordId !== recordId));
}

/** The unique-values table refused a row (Prisma's P2002). */
export function isUniqueViolation(err: unknown): boolean {
  return isPrismaError(err, "P2002") || (err as { code?: unknown } | null)?.code === "23505";
}
