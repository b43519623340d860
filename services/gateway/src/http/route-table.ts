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
  /** Open to the signed-in user the path's `{id}` names, without `permission` (Route.openToSelf). */
  openToSelf?: boolean;
  /** Where that `{id}` is among the path's segments under API_PREFIX. */
  idSegment?: number;
  /** A stable name for logs and metrics, e.g. "GET /client/:id". */
  name: string;
  /** How much longer than UPSTREAM_TIMEOUT_MS its service may hold the answer (Route.waitsUpToMs: the change feed's wait). */
  waitsUpToMs?: number;
  /** Its service claims the request's Idempotency-Key in its own write (Route.keyClaimedByService). */
  keyClaimedByService?: boolean;
}

interface Compiled {
  method: string;
  segments: string[];
  match: RouteMatch;
}

const compiledRoutes: Compiled[] = apiRoutes.map((route) => {
  const segments = expressPath(route.path).split("/").filter(Boolean);
  return {
    method: route.method,
    segments,
    match: {
      service: route.service,
      public: route.public ?? false,
      ...(route.permission ? { permission: route.permission } : {}),
      ...(route.jwtOnly ? { jwtOnly: true } : {}),
      ...(route.openToSelf ? { openToSelf: true, idSegment: segments.indexOf(":id") } : {}),
      ...(route.waitsUpToMs ? { waitsUpToMs: route.waitsUpToMs } : {}),
      ...(route.keyClaimedByService ? { keyClaimedByService: true } : {}),
      name: routeName(route),
    },
  };
});

/**
 * The routes by method and segment count, in declaration order: a request (every request passes
 * here, some twice) compares its segments with the few routes of its shape only, in a plain loop,
 * instead of a closure per route of the whole table.
 */
const byShape = new Map<string, Array<{ segments: Array<string | undefined>; match: RouteMatch }>>();
for (const route of compiledRoutes) {
  const shape = `${route.method} ${route.segments.length}`;
  // A parameter segment (":id") matches any segment: undefined.
  const entry = { segments: route.segments.map((s) => (s.startsWith(":") ? undefined : s)), match: route.match };
  const list = byShape.get(shape);
  if (list) list.push(entry);
  else byShape.set(shape, [entry]);
}

/** The route for a method and a path under /api/v1, or undefined (404000). */
export function matchRoute(method: string, path: string): RouteMatch | undefined {
  if (!path.startsWith(`${API_PREFIX}/`)) return undefined;
  let segments = path.slice(API_PREFIX.length).split("/");
  // Empty segments ("//", a trailing "/") do not count.
  if (segments.includes("")) segments = segments.filter(Boolean);
  const candidates = byShape.get(`${method === "HEAD" ? "GET" : method} ${segments.length}`);
  if (!candidates) return undefined;
  for (const { segments: declared, match } of candidates) {
    let i = 0;
    while (i < declared.length && (declared[i] === undefined || declared[i] === segments[i])) i++;
    if (i === declared.length) return match;
  }
  return undefined;
}

/** The path's segment at `index` under API_PREFIX (as matchRoute counts them), or undefined. */
export function pathSegment(path: string, index: number): string | undefined {
  return path.slice(API_PREFIX.length).split("/").filter(Boolean)[index];
}

/** Whether any method serves this path (for CORS preflights, which name the method separately). */
export function pathExists(path: string): boolean {
  return httpMethods.some((m) => matchRoute(m, path) !== undefined);
}
