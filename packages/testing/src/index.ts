export { testInfra, describeDistributed, describePostgres, createTestDatabase, dropDatabases, terminateConnections, uniqueName } from "./databases";
export { startInfra, startKafkaMock, type StartedInfra } from "./infra";
export { waitFor } from "./wait-for";
export { appErrorOutcome } from "./app-error-outcome";
export { freePort } from "./free-port";
export { errorCollectingLogger } from "./error-collecting-logger";
export { startReceiver, type Receiver, type ReceivedRequest, type Behaviour } from "./receiver";
export { verifyInterfaceSignature } from "./signature-oracle";
export {
  databaseModes,
  preferredMode,
  describeEachMode,
  testDatabase,
  openTestDatabase,
  INTERNAL_TOKEN_SECRET,
  principalFor,
  internalCaller,
  type DatabaseMode,
  type TestDatabase,
  type InternalCaller,
  type HttpMethod,
} from "./service-harness";
export { SuiteResources, sharedFixture } from "./suite-resources";
export { checkDeclaredRoutes } from "./declared-routes";
export { runCommonRouteTests, runRelationPermissionTests, pathParameters, type DeclaredRoute, type RelationSecurityTarget, type RouteSecurityTarget } from "./route-security";
export { FaultProxy, type FaultProxyOptions, isPostgresCommit } from "./fault-proxy";
export { startOwnRedis, redisServerAvailable, type OwnRedis } from "./redis-server";
