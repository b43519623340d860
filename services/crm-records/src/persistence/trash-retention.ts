import type { RecordEntity } from "@crm/contracts";
import type { RetentionRule } from "@crm/service-kit";
import type { EntityDefinition } from "../entities";
import type { PrismaClient } from "./prisma";

/**
 * Records in the trash longer than `retentionMs` (TRASH_RETENTION_DAYS, extensions §E5) are purged,
 * oldest first, in bounded batches; no event, like a purge by hand. Records that others point at (a
 * client) go last and only once nothing names them any more: a client's contacts, invoices and quotes
 * went to the trash no later than it did, so they expire first and go in the same run. The
 * <Model>_trash_deletedAt_idx indexes find them; ids are picked FOR UPDATE SKIP LOCKED, so several
 * instances purge disjoint rows. Invoice and quote numbers are not given back (document-number.ts).
 */
export function trashRetentionRule(prisma: PrismaClient, definitions: Readonly<Record<RecordEntity, EntityDefinition>>, retentionMs: number): RetentionRule {
  const isParent = (definition: EntityDefinition) => (definition.cascadeDelete?.length ?? 0) + (definition.restrictDelete?.length ?? 0) > 0;
  const all = Object.values(definitions);
  const order = [...all.filter((d) => !isParent(d)), ...all.filter(isParent)];
  const statements = order.map((definition) => {
    // Identifiers come from the definitions, never from a request; the values are bound parameters.
    const dependents = [...(definition.cascadeDelete ?? []), ...(definition.restrictDelete ?? [])].map(
      ({ entity, foreignKey }) => `AND NOT EXISTS (SELECT 1 FROM ${definitions[entity].table} AS d WHERE d."businessId" = r."businessId" AND d."${foreignKey}" = r."id")`,
    );
    return `WITH expired AS (
  SELECT r."id" FROM ${definition.table} AS r WHERE r."deletedAt" < $1 ${dependents.join(" ")}
  ORDER BY r."deletedAt" LIMIT $2 FOR UPDATE SKIP LOCKED
)
DELETE FROM ${definition.table} AS t USING expired WHERE t."id" = expired."id"`;
  });
  return {
    name: "trashed records",
    deleteBatch: async (limit, now) => {
      const cutoff = new Date(now.getTime() - retentionMs);
      let deleted = 0;
      for (const statement of statements) {
        if (deleted >= limit) break;
        deleted += await prisma.$executeRawUnsafe(statement, cutoff, limit - deleted);
      }
      return deleted;
    },
  };
}
