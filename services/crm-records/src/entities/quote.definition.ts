import { quoteCreateSchema, quoteStatuses, quoteUpdateSchema } from "@crm/contracts";
import { commonColumns, timestampColumns, type EntityDefinition } from "./entity-definition";

export const quoteDefinition: EntityDefinition = {
  entity: "quote",
  resource: "quotes",
  delegate: "quote",
  table: `"records"."Quote"`,
  createSchema: quoteCreateSchema,
  updateSchema: quoteUpdateSchema,
  columns: {
    ...commonColumns,
    number: { type: "string", nullable: false },
    clientId: { type: "string", nullable: false, uuid: true },
    status: { type: "enum", nullable: false, enumValues: quoteStatuses, default: "DRAFT" },
    currency: { type: "string", nullable: false, default: "USD" },
    validUntil: { type: "datetime", nullable: true },
    notes: { type: "string", nullable: true },
    totalAmount: { type: "decimal", nullable: false },
    ...timestampColumns,
  },
  relations: { client: { target: "client", kind: "one", default: false } },
  clientReference: "clientId",
  document: { numberPrefix: "QUO", itemsRelation: "items" },
  dateInputs: ["validUntil"],
};
