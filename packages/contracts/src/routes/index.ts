import type { OpenAPIRegistry } from "@asteasolutions/zod-to-openapi";
import { auditRoutes, historyRoutes } from "./audit.routes";
import { customFieldRoutes } from "./custom-fields.routes";
import { feedRoutes } from "./feed.routes";
import { gatewayRoutes } from "./gateway.routes";
import { identityRoutes } from "./identity.routes";
import { registerRoutesOpenApi } from "./openapi";
import { recordRoutes } from "./records.routes";
import { recordSchemaRoutes } from "./record-schema.routes";
import type { Route } from "./route";
import { registerWebhooksOpenApi, webhookRoutes } from "./webhooks.routes";

export { API_PREFIX, defineRoute, expressPath, httpMethods, mayCallRoute, routeName, type HttpMethod, type Route, type RouteDocs, type ServiceName } from "./route";
export { openApiOperation, operationIdOf, registerRoutesOpenApi, type RouteTable } from "./openapi";
export { AUDIT_HISTORY_PARAMETERS, AUDIT_LOG_FILTERS, AUDIT_LOG_PARAMETERS, auditRoutes, historyRoutes } from "./audit.routes";
export { CUSTOM_FIELD_ADMIN_PERMISSION, customFieldRoutes, type CustomFieldRoutes } from "./custom-fields.routes";
export { feedRoutes } from "./feed.routes";
export { gatewayRoutes } from "./gateway.routes";
export { identityRoutes } from "./identity.routes";
export { recordRoutes, type RecordRoutes } from "./records.routes";
export { recordJsonSchemaSchema, recordSchemaRoutes, type RecordSchemaRoutes } from "./record-schema.routes";
export { webhookRoutes, registerWebhooksOpenApi } from "./webhooks.routes";

function recordRouteList(): Route[] {
  return Object.values(recordRoutes).flatMap((routes): Route[] => Object.values(routes));
}

/** Every public route, in the order the OpenAPI document lists them. */
export const apiRoutes: readonly Route[] = [
  ...Object.values(gatewayRoutes),
  ...Object.values(identityRoutes),
  // Before the records' routes: the gateway takes the first declared match, so /{entity}/fields and /{entity}/schema are never a record id.
  ...Object.values(customFieldRoutes).flatMap((routes): Route[] => Object.values(routes)),
  ...Object.values(recordSchemaRoutes).map((routes) => routes.getSchema),
  ...recordRouteList(),
  ...Object.values(feedRoutes),
  ...Object.values(webhookRoutes),
  ...Object.values(auditRoutes),
  ...Object.values(historyRoutes).map((routes) => routes.getHistory),
];

/** The routes one service serves. */
export function routesOf(service: Route["service"]): Route[] {
  return apiRoutes.filter((route) => route.service === service);
}

// Identity's and the gateway's route names already name what they act on (signUp, listUsers,
// rollApiKey, eventTypes): their operation ids are the names themselves.
export function registerIdentityOpenApi(registry: OpenAPIRegistry): void {
  registerRoutesOpenApi(registry, { routes: identityRoutes });
}

/** Each entity's routes, named after it: listClients, getClient, createClientBatch, ... */
export function registerRecordsOpenApi(registry: OpenAPIRegistry): void {
  for (const [entity, routes] of Object.entries(recordRoutes)) {
    const one = `${entity[0]!.toUpperCase()}${entity.slice(1)}`;
    registerRoutesOpenApi(registry, { routes, resource: { one, many: `${one}s` } });
  }
  // listClientFields, createClientField, ..., getClientSchema
  for (const [entity, routes] of [...Object.entries(customFieldRoutes), ...Object.entries(recordSchemaRoutes)]) {
    const one = `${entity[0]!.toUpperCase()}${entity.slice(1)}`;
    registerRoutesOpenApi(registry, { routes, resource: { one, many: `${one}s` } });
  }
}

/** The whole public API: the gateway's documents, then each context's routes (and the schemas they refer to). */
export function registerApiOpenApi(registry: OpenAPIRegistry): void {
  registerRoutesOpenApi(registry, { routes: gatewayRoutes });
  registerIdentityOpenApi(registry);
  registerRecordsOpenApi(registry);
  registerRoutesOpenApi(registry, { routes: feedRoutes });
  registerWebhooksOpenApi(registry);
  registerAuditOpenApi(registry);
}

/** The business's audit log, then each entity's history (getClientHistory, ...). */
function registerAuditOpenApi(registry: OpenAPIRegistry): void {
  registerRoutesOpenApi(registry, { routes: auditRoutes });
  for (const [entity, routes] of Object.entries(historyRoutes)) {
    const one = `${entity[0]!.toUpperCase()}${entity.slice(1)}`;
    registerRoutesOpenApi(registry, { routes, resource: { one, many: `${one}s` } });
  }
}
