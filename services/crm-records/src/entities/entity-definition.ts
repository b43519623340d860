// The one shape every entity is described by inside crm-records. A definition drives validation
// (zod schemas), persistence (Prisma delegate, table, columns), the query language's allow-lists,
// the response serializer and the events; the generic service and router know nothing else about
// an entity. Everything public (resource, schemas, fields, relations, client reference) comes from
// the entity's contract in @crm/contracts (records.ts); a definition adds only what persistence
// needs, and is built once at start-up, never per request.
import { recordContracts, recordResourceOf, type RecordContract, type RecordEntity, type RecordRelation, type Resource } from "@crm/contracts";
import type { FieldSpec, QuerySpec } from "@crm/query-language";
import type { ZodObject, ZodRawShape, ZodType } from "zod";

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

export type RelationSpec = RecordRelation;

/** Prisma delegate names of the record models (`prisma.client`, `prisma.invoice`, ...): the entity's name. */
export type RecordDelegateName = RecordEntity;

export interface EntityDefinition {
  entity: RecordEntity;
  /** Permission resource: `clients` in `clients.read`. */
  resource: Resource;
  delegate: RecordDelegateName;
  /** Quoted table name in schema "records", for the row lock taken on delete and the list and insert SQL. */
  table: string;
  createSchema: ZodType;
  updateSchema: ZodType;
  /** Every scalar column, in response order: what `where`/`orderBy` accept and what the serializer emits. */
  columns: Record<string, ColumnSpec>;
  relations: Readonly<Record<string, RelationSpec>>;
  /** Body field naming a client of the caller's business (checked; 400001 at this path otherwise). */
  clientReference?: "clientId";
  /** Invoices and quotes: a per-business number and line items with a computed total. */
  document?: DocumentSpec;
  /** Writable decimal fields (product/service unitPrice), stored as NUMERIC. */
  decimalInputs?: readonly string[];
  /** Writable ISO 8601 date fields, stored as timestamptz. */
  dateInputs?: readonly string[];
  /** On delete: records of these entities that point here are deleted first, each with its own event. */
  cascadeDelete?: ReadonlyArray<{ entity: RecordEntity; foreignKey: string }>;
  /** On delete: any record of these entities pointing here refuses the delete (409003). */
  restrictDelete?: ReadonlyArray<{ entity: RecordEntity; foreignKey: string }>;
}

export interface DocumentSpec {
  numberPrefix: "INV" | "QUO";
  itemsRelation: "items";
}

/** What persistence adds to an entity's contract. */
export interface PersistenceSpec {
  /** Per column, what a create without the field stores: schema.prisma's `@default` (see ColumnSpec.default). */
  defaults?: Readonly<Record<string, string | boolean>>;
  document?: DocumentSpec;
}

/**
 * The definition of `entity`: its contract plus `persistence`. The Prisma model is the entity's name
 * capitalised (`client` -> `Client`, delegate `prisma.client`), in schema "records";
 * prisma-model.test.ts holds the columns, defaults and relations to schema.prisma.
 */
export function defineEntity(entity: RecordEntity, persistence: PersistenceSpec = {}): EntityDefinition {
  const contract: RecordContract = recordContracts[entity];
  const defaults = persistence.defaults ?? {};
  for (const name of Object.keys(defaults)) {
    if (!Object.hasOwn(contract.fields, name)) throw new Error(`${entity}: a default for "${name}", which is no field of the contract`);
  }
  const columns: Record<string, ColumnSpec> = {};
  for (const [name, field] of Object.entries(contract.fields)) {
    const uuid = field.type === "uuid";
    columns[name] = {
      // The query language compares ids as the opaque strings the interface says they are (where-guard.ts).
      type: uuid ? "string" : field.type,
      nullable: field.nullable,
      ...(uuid ? { uuid } : {}),
      ...(field.enumValues ? { enumValues: field.enumValues } : {}),
      ...(defaults[name] !== undefined ? { default: defaults[name] } : {}),
    };
  }
  // The body fields a client may write, by the column type they are stored as.
  const writable = new Set(Object.keys((contract.create as ZodObject<ZodRawShape>).shape));
  const writableOfType = (type: ColumnSpec["type"]) => Object.keys(columns).filter((name) => writable.has(name) && columns[name]!.type === type);
  const dependents = (onDelete: "cascade" | "restrict") =>
    Object.values(contract.relations)
      .filter((relation) => relation.kind === "many" && relation.onDelete === onDelete)
      .map((relation) => ({ entity: relation.target, foreignKey: clientReferenceOf(relation.target, entity) }));

  return withoutEmpty({
    entity,
    resource: recordResourceOf[entity],
    delegate: entity,
    table: `"records"."${modelNameOf(entity)}"`,
    createSchema: contract.create,
    updateSchema: contract.update,
    columns,
    relations: contract.relations,
    clientReference: contract.clientReference,
    document: persistence.document,
    decimalInputs: writableOfType("decimal"),
    dateInputs: writableOfType("datetime"),
    cascadeDelete: dependents("cascade"),
    restrictDelete: dependents("restrict"),
  });
}

/** The Prisma model of an entity: `client` -> `Client`. */
export function modelNameOf(entity: RecordEntity): string {
  return `${entity[0]!.toUpperCase()}${entity.slice(1)}`;
}

function clientReferenceOf(target: RecordEntity, owner: RecordEntity): string {
  const field = (recordContracts[target] as RecordContract).clientReference;
  if (!field) throw new Error(`${owner} has many ${target}, which has no client reference`);
  return field;
}

/** Optional parts a definition does not use are absent, not empty, as the consumers test them with `?.`/`??`. */
function withoutEmpty(definition: EntityDefinition): EntityDefinition {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(definition)) {
    if (value === undefined || (Array.isArray(value) && value.length === 0)) continue;
    out[key] = value;
  }
  return out as unknown as EntityDefinition;
}

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
