// The one shape every entity is described by. A definition drives validation (zod schemas from
// @crm/contracts), persistence (Prisma delegate, columns), the query language's allow-lists, the
// response serializer and the events; the generic service and router know nothing else about an entity.
import type { RecordEntity, Resource } from "@crm/contracts";
import type { FieldSpec, QuerySpec } from "@crm/query-language";
import type { ZodType } from "zod";

/** A stored column: its query-language type, plus whether PostgreSQL holds it as `uuid`. */
export interface ColumnSpec extends FieldSpec {
  /** `uuid` columns only compare with UUID text; see where-guard.ts. */
  uuid?: boolean;
  /**
   * What a create without this field stores: the column's `@default` in schema.prisma. A create
   * writes every column itself (one statement, see record-insert.ts), so the response and the
   * event show exactly the stored row; test/create-defaults.test.ts compares the two.
   */
  default?: string | boolean;
}

export interface RelationSpec {
  target: RecordEntity;
  /** `many`: the target holds `clientId` pointing here; `one`: this record's `clientId` points to the target. */
  kind: "many" | "one";
  default: boolean;
}

/** Prisma delegate names of the record models (`prisma.client`, `prisma.invoice`, ...). */
export type RecordDelegateName = "client" | "contact" | "invoice" | "quote" | "product" | "service" | "employee";

export interface EntityDefinition {
  entity: RecordEntity;
  /** Permission resource: `clients` in `clients.read`. */
  resource: Resource;
  delegate: RecordDelegateName;
  /** Quoted table name in schema "records", for the row lock taken on delete. */
  table: string;
  createSchema: ZodType;
  updateSchema: ZodType;
  /** Every scalar column, in response order: what `where`/`orderBy` accept and what the serializer emits. */
  columns: Record<string, ColumnSpec>;
  relations: Record<string, RelationSpec>;
  /** Body field naming a client of the caller's business (checked; 400001 at this path otherwise). */
  clientReference?: "clientId";
  /** Invoices and quotes: a per-business number and line items with a computed total. */
  document?: { numberPrefix: "INV" | "QUO"; itemsRelation: "items" };
  /** Writable decimal fields (product/service unitPrice), stored as NUMERIC. */
  decimalInputs?: readonly string[];
  /** Writable ISO 8601 date fields, stored as timestamptz. */
  dateInputs?: readonly string[];
  /** On delete: records of these entities that point here are deleted first, each with its own event. */
  cascadeDelete?: ReadonlyArray<{ entity: RecordEntity; foreignKey: string }>;
  /** On delete: any record of these entities pointing here refuses the delete (409003). */
  restrictDelete?: ReadonlyArray<{ entity: RecordEntity; foreignKey: string }>;
}

/** The columns every record has (decisions §2). */
export const commonColumns = {
  id: { type: "string", nullable: false, uuid: true },
  businessId: { type: "string", nullable: false, uuid: true },
} as const satisfies Record<string, ColumnSpec>;

export const timestampColumns = {
  createdAt: { type: "datetime", nullable: false },
  updatedAt: { type: "datetime", nullable: false },
} as const satisfies Record<string, ColumnSpec>;

/** What the query language needs: every scalar column is filterable and sortable (decisions §3). */
export function querySpecOf(definition: EntityDefinition): QuerySpec {
  const fields: QuerySpec["fields"] = {};
  for (const [name, column] of Object.entries(definition.columns)) {
    fields[name] = { type: column.type, nullable: column.nullable, ...(column.enumValues ? { enumValues: column.enumValues } : {}) };
  }
  const relations: QuerySpec["relations"] = {};
  for (const [name, relation] of Object.entries(definition.relations)) relations[name] = { default: relation.default };
  return { fields, relations };
}
