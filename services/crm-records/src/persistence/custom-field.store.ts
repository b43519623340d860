// Custom field definitions in the database (extensions §E4): the definitions themselves, the
// per-business version every definition write raises, and removing a definition's values for good.
import type { CustomFieldType, RecordEntity } from "@crm/contracts";
import type { EntityDefinition } from "../entities";
import type { CustomFieldDefinition, DefinitionValues } from "../domain/custom-field-definitions";
import type { CustomFieldValue } from "../domain/custom-field-values";
import { Prisma, type PrismaClient, type Tx } from "./prisma";
import type { RunStatement } from "./record-reads";
import { dropSortValuesOfKey, settleNewDefinition, syncSortValues } from "./custom-field-sort";

/** Every definition of a business, per entity, oldest first, and the version they were read at. */
export interface BusinessDefinitions {
  version: bigint;
  byEntity: ReadonlyMap<RecordEntity, readonly CustomFieldDefinition[]>;
}

type DefinitionRow = Awaited<ReturnType<PrismaClient["customFieldDefinition"]["findMany"]>>[number];

function definitionOf(row: DefinitionRow): CustomFieldDefinition {
  return {
    key: row.key,
    label: row.label,
    description: row.description,
    type: row.type as CustomFieldType,
    required: row.required,
    unique: row.unique,
    options: (row.options as string[] | null) ?? null,
    defaultValue: (row.defaultValue as CustomFieldValue | null) ?? null,
    isArchived: row.isArchived,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
  };
}

const JSON_NULL = Prisma.DbNull;
const ORDER = [{ createdAt: "asc" }, { key: "asc" }] as const;

export class CustomFieldStore {
  constructor(
    private readonly prisma: PrismaClient,
    private readonly run: RunStatement,
  ) {}

  /** The business's definition version (0 before its first definition write). One primary-key read on the driver. */
  async version(businessId: string): Promise<bigint> {
    const rows = await this.run(`SELECT "version" FROM "records"."CustomFieldVersion" WHERE "businessId" = $1::uuid`, [businessId], "custom_field_version");
    const version = rows[0]?.["version"];
    return version === undefined || version === null ? 0n : BigInt(version as string | number | bigint);
  }

  /** Every definition of the business, with the version read in the same snapshot. */
  async all(businessId: string): Promise<BusinessDefinitions> {
    const [version, rows] = await this.prisma.$transaction([
      this.prisma.customFieldVersion.findUnique({ where: { businessId } }),
      this.prisma.customFieldDefinition.findMany({ where: { businessId }, orderBy: [...ORDER] }),
    ]);
    const byEntity = new Map<RecordEntity, CustomFieldDefinition[]>();
    for (const row of rows) {
      const entity = row.entity as RecordEntity;
      const list = byEntity.get(entity) ?? [];
      list.push(definitionOf(row));
      byEntity.set(entity, list);
    }
    return { version: version?.version ?? 0n, byEntity };
  }

  /**
   * A definition write: the business's version is raised first, which takes its row lock until
   * commit, so the business's definition writes run one at a time and `existing` (the entity's
   * definitions, archived included) stays true until this one commits.
   */
  async write<T>(businessId: string, entity: RecordEntity, work: (tx: Tx, existing: CustomFieldDefinition[]) => Promise<T>): Promise<T> {
    return this.prisma.$transaction(async (tx) => {
      await tx.$executeRaw`INSERT INTO "records"."CustomFieldVersion" ("businessId", "version") VALUES (${businessId}::uuid, 1)
        ON CONFLICT ("businessId") DO UPDATE SET "version" = "CustomFieldVersion"."version" + 1`;
      const rows = await tx.customFieldDefinition.findMany({ where: { businessId, entity }, orderBy: [...ORDER] });
      return work(tx, rows.map(definitionOf));
    });
  }

  /** After a new definition committed: rows for the records created while it was being made (settleNewDefinition). */
  settleNew(entity: EntityDefinition, businessId: string, field: { key: string; type: CustomFieldType }): Promise<number> {
    return settleNewDefinition(this.prisma, entity, businessId, field);
  }

  /** A new definition, and a sort value for each of the entity's records (custom-field-sort.ts). */
  async insert(tx: Tx, businessId: string, entity: EntityDefinition, values: DefinitionValues): Promise<CustomFieldDefinition> {
    const row = await tx.customFieldDefinition.create({ data: { businessId, entity: entity.entity, ...stored(values) } });
    await syncSortValues(tx, entity, businessId, null, values.key);
    return definitionOf(row);
  }

  async update(tx: Tx, businessId: string, entity: RecordEntity, values: DefinitionValues): Promise<CustomFieldDefinition> {
    const { key, ...rest } = stored(values);
    const row = await tx.customFieldDefinition.update({ where: { businessId_entity_key: { businessId, entity, key } }, data: rest });
    return definitionOf(row);
  }

  /** The definition, its unique values and every record's value of it, gone for good. */
  async remove(tx: Tx, businessId: string, entity: EntityDefinition, key: string): Promise<void> {
    await tx.customFieldDefinition.delete({ where: { businessId_entity_key: { businessId, entity: entity.entity, key } } });
    await tx.customFieldUniqueValue.deleteMany({ where: { businessId, entity: entity.entity, key } });
    await dropSortValuesOfKey(tx, businessId, entity.entity, key);
    // `table` is a constant of the entity definition; the values are bound parameters.
    await tx.$executeRawUnsafe(
      `UPDATE ${entity.table} SET "customFields" = "customFields" - $2::text WHERE "businessId" = $1::uuid AND "customFields" ? $2::text`,
      businessId,
      key,
    );
  }
}

/** Prisma's JSON columns take `DbNull` for SQL NULL; a plain null here means "no options" or "no default". */
function stored(values: DefinitionValues) {
  return {
    key: values.key,
    label: values.label,
    description: values.description,
    type: values.type,
    required: values.required,
    unique: values.unique,
    options: values.options === null ? JSON_NULL : [...values.options],
    defaultValue: values.defaultValue === null ? JSON_NULL : values.defaultValue,
    isArchived: values.isArchived,
  };
}
