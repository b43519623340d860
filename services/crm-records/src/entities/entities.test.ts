import { recordContracts, recordEntities } from "@crm/contracts";
import { entityDefinitions } from "./index";

// The public contract (OpenAPI, /capabilities) and the service's own definitions name the same
// relations with the same defaults; this keeps the two from drifting apart.
describe("entity definitions", () => {
  it.each(recordEntities)("%s: relations and defaults match the contract", (entity) => {
    const fromDefinition = Object.fromEntries(Object.entries(entityDefinitions[entity].relations).map(([name, spec]) => [name, spec.default]));
    expect(fromDefinition).toEqual(recordContracts[entity].relations);
  });
});
