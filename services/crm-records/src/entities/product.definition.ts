import { productCreateSchema, productUpdateSchema } from "@crm/contracts";
import { commonColumns, timestampColumns, type EntityDefinition } from "./entity-definition";

export const productDefinition: EntityDefinition = {
  entity: "product",
  resource: "products",
  delegate: "product",
  table: `"records"."Product"`,
  createSchema: productCreateSchema,
  updateSchema: productUpdateSchema,
  columns: {
    ...commonColumns,
    name: { type: "string", nullable: false },
    description: { type: "string", nullable: true },
    sku: { type: "string", nullable: true },
    unitPrice: { type: "decimal", nullable: false },
    currency: { type: "string", nullable: false },
    isActive: { type: "boolean", nullable: false },
    ...timestampColumns,
  },
  relations: {},
  decimalInputs: ["unitPrice"],
};
