// Every route a service declares in @crm/contracts is served by that service, behind the declared
// permission; and nothing else is served on the declared paths. The gateway forwards by the same
// declarations, so a route it offers can never meet a service that has no handler for it.
import { allPermissions, API_PREFIX, httpMethods, routeName, routesOf, type HttpMethod, type Route, type ServiceName } from "@crm/contracts";
import { internalCaller, principalFor } from "./service-harness";

const BUSINESS_ID = "01939d5e-8c2a-7b3e-9f1a-2c4d6e8f0a1b";

/** A concrete path for a declared one: every `{param}` becomes a well-formed id that exists nowhere. */
const concrete = (route: Pick<Route, "path">) => `${API_PREFIX}${route.path.replace(/\{[^}]+\}/g, "01939d5e-0000-7000-8000-000000000000")}`;

type App = Parameters<typeof internalCaller>[0];

/** Whether a declared route takes this method and declared path (a `{param}` takes any one segment). */
function served(routes: readonly Route[], method: HttpMethod, path: string): boolean {
  const segments = path.split("/");
  return routes.some((route) => {
    const declared = route.path.split("/");
    return route.method === method && declared.length === segments.length && declared.every((s, i) => s.startsWith("{") || s === segments[i]);
  });
}

async function send(app: App, method: HttpMethod, path: string, permissions: readonly string[]): Promise<{ status: number; code?: number }> {
  const caller = internalCaller(app, principalFor(BUSINESS_ID, permissions));
  const res = await caller[method.toLowerCase() as Lowercase<HttpMethod>](path);
  return { status: res.status, code: res.body?.error?.code };
}

/**
 * For each route `service` declares: with every permission but the declared one the service answers
 * 401014 (so the route is mounted behind that permission); a route without one is answered by
 * something other than 404000. Any method not declared on a declared path answers 404000.
 * The app should be built on inert dependencies: handlers of permission-free routes do run.
 */
export async function checkDeclaredRoutes(app: App, service: ServiceName): Promise<string[]> {
  const problems: string[] = [];
  const routes = routesOf(service);
  for (const route of routes) {
    const path = concrete(route);
    if (route.permission) {
      const answer = await send(
        app,
        route.method,
        path,
        allPermissions.filter((p) => p !== route.permission),
      );
      if (answer.code !== 401014) problems.push(`${routeName(route)}: without ${route.permission} answered ${answer.status} ${answer.code}, not 401014`);
    } else {
      const answer = await send(app, route.method, path, allPermissions);
      if (answer.code === 404000) problems.push(`${routeName(route)}: no handler (404000)`);
    }
  }
  for (const path of new Set(routes.map((route) => route.path))) {
    for (const method of httpMethods) {
      if (served(routes, method, path)) continue;
      const answer = await send(app, method, concrete({ path }), allPermissions);
      if (answer.code !== 404000) problems.push(`${method} ${path}: not declared, but answered ${answer.status} ${answer.code}`);
    }
  }
  return problems;
}
