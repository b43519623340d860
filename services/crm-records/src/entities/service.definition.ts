import { serviceCreateSchema, serviceUpdateSchema } from "@crm/contracts";
import { commonColumns, timestampColumns, type EntityDefinition } from "./entity-definition";

export const serviceDefinition: EntityDefinition = {
  entity: "service",
  resource: "services",
  delegate: "service",
  table: `"records"."Service"`,
  createSchema: serviceCreateSchema,
  updateSchema: serviceUpdateSchema,
  columns: {
    ...commonColumns,
    name: { type: "string", nullable: false },
    description: { type: "string", nullable: true },
    unitPrice: { type: "decimal", nullable: false, default: "0" },
    unit: { type: "string", nullable: true },
    isActive: { type: "boolean", nullable: false, default: true },
    ...timestampColumns,
  },
  relations: {},
  decimalInputs: ["unitPrice"],
};
