import { contactCreateSchema, contactTypes, contactUpdateSchema } from "@crm/contracts";
import { commonColumns, timestampColumns, type EntityDefinition } from "./entity-definition";

export const contactDefinition: EntityDefinition = {
  entity: "contact",
  resource: "contacts",
  delegate: "contact",
  table: `"records"."Contact"`,
  createSchema: contactCreateSchema,
  updateSchema: contactUpdateSchema,
  columns: {
    ...commonColumns,
    clientId: { type: "string", nullable: false, uuid: true },
    type: { type: "enum", nullable: false, enumValues: contactTypes },
    value: { type: "string", nullable: false },
    isPrimary: { type: "boolean", nullable: false, default: false },
    ...timestampColumns,
  },
  relations: { client: { target: "client", kind: "one", default: false } },
  clientReference: "clientId",
};
