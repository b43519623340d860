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
    unitPrice: { type: "decimal", nullable: false, default: "0" },
    currency: { type: "string", nullable: false, default: "USD" },
    isActive: { type: "boolean", nullable: false, default: true },
    ...timestampColumns,
  },
  relations: {},
  decimalInputs: ["unitPrice"],
};
