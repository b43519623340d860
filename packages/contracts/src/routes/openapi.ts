// Route declarations -> OpenAPI operations: what a declaration says once (method, path, security,
// error codes) is spelled out here for the document.
import type { OpenAPIRegistry, RouteConfig } from "@asteasolutions/zod-to-openapi";
import { AUTHENTICATED_ROUTE_ERRORS, errorResponses, jsonContent, PUBLIC_ROUTE_ERRORS } from "../openapi-responses";
import { API_PREFIX, type Route, type RouteDocs } from "./route";

/** Public routes need nothing; JWT-only ones accept the bearer scheme alone; the rest use the document's default (both schemes). */
function securityOf(route: Route): RouteConfig["security"] {
  if (route.public) return [];
  if (route.jwtOnly) return [{ bearerAuth: [] }];
  return undefined;
}

/** The operation of a declared route, or undefined when it is not documented. */
export function openApiOperation(route: Route, operationId?: string): RouteConfig | undefined {
  if (!route.docs) return undefined;
  const docs = route.docs();
  const security = securityOf(route);
  const errors = route.errors ? errorResponses(route.errors, route.public ? PUBLIC_ROUTE_ERRORS : AUTHENTICATED_ROUTE_ERRORS) : {};
  const request = route.body ? { ...docs.request, body: { required: route.body.required, ...jsonContent(route.body.schema) } } : docs.request;
  if (route.query) checkDocumentedQuery(route, route.query, docs);
  return {
    ...(operationId ? { operationId } : {}),
    ...(security ? { security } : {}),
    ...docs,
    ...(request ? { request } : {}),
    method: route.method.toLowerCase() as RouteConfig["method"],
    path: `${API_PREFIX}${route.path}`,
    responses: { ...docs.responses, ...errors },
  };
}

/** A route that refuses unknown query parameters documents exactly the ones it takes. */
function checkDocumentedQuery(route: Route, takes: readonly string[], docs: RouteDocs): void {
  const query = docs.request?.query;
  const documented = query && "shape" in query ? Object.keys((query as { shape: object }).shape) : [];
  if ([...documented].sort().join() !== [...takes].sort().join()) {
    throw new Error(`${route.method} ${route.path}: takes query parameters ${takes.join(", ")} but documents ${documented.join(", ") || "none"}`);
  }
}

/**
 * A table of routes as its module declares them (`{ list: ..., get: ... }`), and the resource it
 * serves when its names are bare verbs: `{ one: "Webhook", many: "Webhooks" }`.
 */
export interface RouteTable {
  routes: Readonly<Record<string, Route>>;
  resource?: { one: string; many: string };
}

/**
 * The operation id of the route named `name` in its table: the name itself, or, in a table that
 * serves one resource, the resource inserted after the name's first word, plural after a bare
 * `list` (list -> listWebhooks, get -> getWebhook, createBatch -> createClientBatch,
 * rotateSecret -> rotateWebhookSecret, listDeliveries -> listWebhookDeliveries). SDK generators
 * name their methods after these, so they only ever change with the route's name.
 */
export function operationIdOf(name: string, resource?: RouteTable["resource"]): string {
  if (!resource) return name;
  const verbEnd = name.search(/[A-Z]/);
  const verb = verbEnd === -1 ? name : name.slice(0, verbEnd);
  const rest = verbEnd === -1 ? "" : name.slice(verbEnd);
  return `${verb}${verb === "list" && rest === "" ? resource.many : resource.one}${rest}`;
}

/** Registers a table's documented routes, in order, each under its operation id. */
export function registerRoutesOpenApi(registry: OpenAPIRegistry, table: RouteTable): void {
  for (const [name, route] of Object.entries(table.routes)) {
    const operation = openApiOperation(route, operationIdOf(name, table.resource));
    if (operation) registry.registerPath(operation);
  }
}
