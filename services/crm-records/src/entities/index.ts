// The registry: adding an entity is adding a definition here, not new plumbing.
import type { RecordEntity } from "@crm/contracts";
import { clientDefinition } from "./client.definition";
import { contactDefinition } from "./contact.definition";
import { employeeDefinition } from "./employee.definition";
import type { EntityDefinition } from "./entity-definition";
import { invoiceDefinition } from "./invoice.definition";
import { productDefinition } from "./product.definition";
import { quoteDefinition } from "./quote.definition";
import { serviceDefinition } from "./service.definition";

export const entityDefinitions: Readonly<Record<RecordEntity, EntityDefinition>> = {
  client: clientDefinition,
  contact: contactDefinition,
  invoice: invoiceDefinition,
  quote: quoteDefinition,
  product: productDefinition,
  service: serviceDefinition,
  employee: employeeDefinition,
};

export type { EntityDefinition, ColumnSpec, RelationSpec, RecordDelegateName } from "./entity-definition";
export { querySpecOf } from "./entity-definition";
