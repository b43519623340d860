import { clientCreateSchema, clientUpdateSchema } from "@crm/contracts";
import { commonColumns, timestampColumns, type EntityDefinition } from "./entity-definition";

export const clientDefinition: EntityDefinition = {
  entity: "client",
  resource: "clients",
  delegate: "client",
  table: `"records"."Client"`,
  createSchema: clientCreateSchema,
  updateSchema: clientUpdateSchema,
  columns: {
    ...commonColumns,
    firstName: { type: "string", nullable: false },
    lastName: { type: "string", nullable: false },
    email: { type: "string", nullable: true },
    phone: { type: "string", nullable: true },
    companyName: { type: "string", nullable: true },
    notes: { type: "string", nullable: true },
    isActive: { type: "boolean", nullable: false, default: true },
    ...timestampColumns,
  },
  relations: {
    contacts: { target: "contact", kind: "many", default: true },
    invoices: { target: "invoice", kind: "many", default: false },
    quotes: { target: "quote", kind: "many", default: false },
  },
  // Contacts belong to the client; invoices and quotes are business documents that must not vanish.
  cascadeDelete: [{ entity: "contact", foreignKey: "clientId" }],
  restrictDelete: [
    { entity: "invoice", foreignKey: "clientId" },
    { entity: "quote", foreignKey: "clientId" },
  ],
};
