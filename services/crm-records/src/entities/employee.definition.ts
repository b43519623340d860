import { employeeCreateSchema, employeeUpdateSchema } from "@crm/contracts";
import { commonColumns, timestampColumns, type EntityDefinition } from "./entity-definition";

export const employeeDefinition: EntityDefinition = {
  entity: "employee",
  resource: "employees",
  delegate: "employee",
  table: `"records"."Employee"`,
  createSchema: employeeCreateSchema,
  updateSchema: employeeUpdateSchema,
  columns: {
    ...commonColumns,
    firstName: { type: "string", nullable: false },
    lastName: { type: "string", nullable: false },
    email: { type: "string", nullable: true },
    phone: { type: "string", nullable: true },
    position: { type: "string", nullable: true },
    isActive: { type: "boolean", nullable: false, default: true },
    ...timestampColumns,
  },
  relations: {},
};
