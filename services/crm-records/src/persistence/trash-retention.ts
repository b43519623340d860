import { AuditWriter, SYSTEM_CONTEXT } from "@crm/audit";
import type { RecordEntity } from "@crm/contracts";
import type { RetentionRule } from "@crm/service-kit";
import type { EntityDefinition } from "../entities";
import { purgedAuditChange } from "../domain/record-audit";
import type { PrismaClient } from "./prisma";
import { dropSortValues } from "./custom-field-sort";

/**
 * Records in the trash longer than `retentionMs` (TRASH_RETENTION_DAYS, extensions §E5) are purged,
 * oldest first, in bounded batches; no event, like a purge by hand. Records that others point at (a
 * client) go last and only once nothing names them any more: a client's contacts, invoices and quotes
 * went to the trash no later than it did, so they expire first and go in the same run. The
 * <Model>_trash_deletedAt_idx indexes find them; ids are picked FOR UPDATE SKIP LOCKED, so several
 * instances purge disjoint rows. Invoice and quote numbers are not given back (document-number.ts).
 * Each record purged gets its `{entity}.purged` audit entry (extensions §E7), in the transaction of
 * the statement that removed it, made by the system actor (SYSTEM_CONTEXT: no request asked for it).
 */
export function trashRetentionRule(
  prisma: PrismaClient,
  definitions: Readonly<Record<RecordEntity, EntityDefinition>>,
  retentionMs: number,
  audit: AuditWriter = new AuditWriter("records"),
): RetentionRule {
  const isParent = (definition: EntityDefinition) => (definition.cascadeDelete?.length ?? 0) + (definition.restrictDelete?.length ?? 0) > 0;
  const all = Object.values(definitions);
  const order = [...all.filter((d) => !isParent(d)), ...all.filter(isParent)];
  const statements = order.map((definition) => {
    // Identifiers come from the definitions, never from a request; the values are bound parameters.
    const dependents = [...(definition.cascadeDelete ?? []), ...(definition.restrictDelete ?? [])].map(
      ({ entity, foreignKey }) => `AND NOT EXISTS (SELECT 1 FROM ${definitions[entity].table} AS d WHERE d."businessId" = r."businessId" AND d."${foreignKey}" = r."id")`,
    );
    const statement = `WITH expired AS (
  SELECT r."id" FROM ${definition.table} AS r WHERE r."deletedAt" < $1 ${dependents.join(" ")}
  ORDER BY r."deletedAt" LIMIT $2 FOR UPDATE SKIP LOCKED
)
DELETE FROM ${definition.table} AS t USING expired WHERE t."id" = expired."id" RETURNING t."id", t."businessId"`;
    return { entity: definition.entity, sql: statement };
  });
  return {
    name: "trashed records",
    deleteBatch: async (limit, now) => {
      const cutoff = new Date(now.getTime() - retentionMs);
      let deleted = 0;
      for (const { entity, sql } of statements) {
        if (deleted >= limit) break;
        deleted += await prisma.$transaction(async (tx) => {
          const gone = await tx.$queryRawUnsafe<Array<{ id: string; businessId: string }>>(sql, cutoff, limit - deleted);
          for (const [businessId, ids] of idsByBusiness(gone)) {
            await audit.record(
              tx,
              businessId,
              ids.map((id) => purgedAuditChange({ entity, id })),
              SYSTEM_CONTEXT,
            );
            await dropSortValues(tx, businessId, entity, ids);
          }
          return gone.length;
        });
      }
      return deleted;
    },
  };
}

function idsByBusiness(rows: ReadonlyArray<{ id: string; businessId: string }>): Map<string, string[]> {
  const grouped = new Map<string, string[]>();
  for (const { id, businessId } of rows) {
    const ids = grouped.get(businessId);
    if (ids) ids.push(id);
    else grouped.set(businessId, [id]);
  }
  return grouped;
}
