import { invoiceCreateSchema, invoiceStatuses, invoiceUpdateSchema } from "@crm/contracts";
import { commonColumns, timestampColumns, type EntityDefinition } from "./entity-definition";

export const invoiceDefinition: EntityDefinition = {
  entity: "invoice",
  resource: "invoices",
  delegate: "invoice",
  table: `"records"."Invoice"`,
  createSchema: invoiceCreateSchema,
  updateSchema: invoiceUpdateSchema,
  columns: {
    ...commonColumns,
    number: { type: "string", nullable: false },
    clientId: { type: "string", nullable: false, uuid: true },
    status: { type: "enum", nullable: false, enumValues: invoiceStatuses, default: "DRAFT" },
    currency: { type: "string", nullable: false, default: "USD" },
    issueDate: { type: "datetime", nullable: true },
    dueDate: { type: "datetime", nullable: true },
    notes: { type: "string", nullable: true },
    totalAmount: { type: "decimal", nullable: false },
    ...timestampColumns,
  },
  relations: { client: { target: "client", kind: "one", default: false } },
  clientReference: "clientId",
  document: { numberPrefix: "INV", itemsRelation: "items" },
  dateInputs: ["issueDate", "dueDate"],
};
