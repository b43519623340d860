// Which service owns each public route and which permission it needs, derived from the route
// declarations in @crm/contracts. The gateway checks the permission before forwarding; the service
// checks it again (defence in depth).
import { API_PREFIX, apiRoutes, expressPath, httpMethods, routeName, type Permission, type ServiceName } from "@crm/contracts";

export { API_PREFIX, type ServiceName };

export interface RouteMatch {
  service: ServiceName;
  /** Needed permission; undefined = any authenticated caller (or nobody, when public). */
  permission?: Permission;
  /** No credentials needed. */
  public: boolean;
  /** Refused to API keys (401014): actions only a signed-in user may take. */
  jwtOnly?: boolean;
  /** A stable name for logs and metrics, e.g. "GET /client/:id". */
  name: string;
}

interface Compiled {
  method: string;
  segments: string[];
  match: RouteMatch;
}

const compiled: Compiled[] = apiRoutes.map((route) => ({
  method: route.method,
  segments: expressPath(route.path).split("/").filter(Boolean),
  match: {
    service: route.service,
    public: route.public ?? false,
    ...(route.permission ? { permission: route.permission } : {}),
    ...(route.jwtOnly ? { jwtOnly: true } : {}),
    name: routeName(route),
  },
}));

/** The route for a method and a path under /api/v1, or undefined (404000). */
export function matchRoute(method: string, path: string): RouteMatch | undefined {
  if (!path.startsWith(`${API_PREFIX}/`)) return undefined;
  const segments = path.slice(API_PREFIX.length).split("/").filter(Boolean);
  const verb = method === "HEAD" ? "GET" : method;
  for (const route of compiled) {
    if (route.method !== verb || route.segments.length !== segments.length) continue;
    if (route.segments.every((s, i) => s.startsWith(":") || s === segments[i])) return route.match;
  }
  return undefined;
}

/** Whether any method serves this path (for CORS preflights, which name the method separately). */
export function pathExists(path: string): boolean {
  return httpMethods.some((m) => matchRoute(m, path) !== undefined);
}
