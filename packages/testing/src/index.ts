export { testInfra, describeDistributed, describePostgres, createTestDatabase, uniqueName } from "./databases";
export { startKafkaMock } from "./infra";
export { waitFor } from "./wait-for";
