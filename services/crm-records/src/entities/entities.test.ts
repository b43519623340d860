import { recordContracts, recordEntities, recordFields } from "@crm/contracts";
import { entityDefinitions } from "./index";

// The public contract (OpenAPI, /capabilities) and the service's own definitions name the same
// relations with the same defaults; this keeps the two from drifting apart.
describe("entity definitions", () => {
  it.each(recordEntities)("%s: relations and defaults match the contract", (entity) => {
    const fromDefinition = Object.fromEntries(Object.entries(entityDefinitions[entity].relations).map(([name, spec]) => [name, spec.default]));
    expect(fromDefinition).toEqual(recordContracts[entity].relations);
  });

  // Webhook filters (extensions §E1.5) name and compare the same fields a list's where does.
  it.each(recordEntities)("%s: columns match the contract's record fields", (entity) => {
    const fromDefinition = Object.fromEntries(
      Object.entries(entityDefinitions[entity].columns).map(([name, column]) => [
        name,
        { type: column.uuid ? "uuid" : column.type, nullable: column.nullable, ...(column.enumValues ? { enumValues: column.enumValues } : {}) },
      ]),
    );
    expect(fromDefinition).toEqual(recordFields[entity]);
  });
});
