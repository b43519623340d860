// The registry: each entity's contract (@crm/contracts, records.ts) plus what persistence adds to it.
// Adding an entity is a contract, a Prisma model with its migration, and a line here.
import type { RecordEntity } from "@crm/contracts";
import { defineEntity, type EntityDefinition } from "./entity-definition";

export const entityDefinitions: Readonly<Record<RecordEntity, EntityDefinition>> = {
  client: defineEntity("client", { defaults: { isActive: true } }),
  contact: defineEntity("contact", { defaults: { isPrimary: false } }),
  invoice: defineEntity("invoice", { defaults: { status: "DRAFT", currency: "USD" }, document: { numberPrefix: "INV", itemsRelation: "items" } }),
  quote: defineEntity("quote", { defaults: { status: "DRAFT", currency: "USD" }, document: { numberPrefix: "QUO", itemsRelation: "items" } }),
  product: defineEntity("product", { defaults: { unitPrice: "0", currency: "USD", isActive: true } }),
  service: defineEntity("service", { defaults: { unitPrice: "0", isActive: true } }),
  employee: defineEntity("employee", { defaults: { isActive: true } }),
};

export type { EntityDefinition, ColumnSpec, RelationSpec, RecordDelegateName } from "./entity-definition";
export { modelNameOf, querySpecOf } from "./entity-definition";
