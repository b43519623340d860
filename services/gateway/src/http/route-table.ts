// Which service owns each public route and which permission it needs. The gateway checks the
// permission before forwarding; the service checks it again (defence in depth).
import { recordEntities, recordResourceOf, type Permission } from "@crm/contracts";

export type ServiceName = "identity" | "crm-records" | "webhook-delivery" | "gateway";

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

type Method = "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
interface RouteDef extends Omit<RouteMatch, "name"> {
  method: Method;
  pattern: string;
}

const defs: RouteDef[] = [
  { method: "GET", pattern: "/capabilities", service: "gateway", public: true },
  { method: "GET", pattern: "/openapi.json", service: "gateway", public: true },
  { method: "GET", pattern: "/event-types", service: "gateway", public: true },
  { method: "GET", pattern: "/docs", service: "gateway", public: true },
  { method: "GET", pattern: "/docs/:asset", service: "gateway", public: true },
  { method: "POST", pattern: "/auth/sign-up", service: "identity", public: true },
  { method: "POST", pattern: "/auth/sign-in", service: "identity", public: true },
  { method: "POST", pattern: "/auth/token/refresh", service: "identity", public: true },
  { method: "POST", pattern: "/auth/logout", service: "identity", public: false },
  { method: "GET", pattern: "/auth/me", service: "identity", public: false },
  { method: "GET", pattern: "/user", service: "identity", public: false, permission: "users.read" },
  { method: "POST", pattern: "/user", service: "identity", public: false, permission: "users.create" },
  { method: "GET", pattern: "/user/:id", service: "identity", public: false, permission: "users.read" },
  { method: "PATCH", pattern: "/user/:id", service: "identity", public: false, permission: "users.update" },
  { method: "PUT", pattern: "/user/:id", service: "identity", public: false, permission: "users.update" },
  { method: "DELETE", pattern: "/user/:id", service: "identity", public: false, permission: "users.delete" },
  { method: "POST", pattern: "/api-key", service: "identity", public: false, permission: "apiKeys.create", jwtOnly: true },
  { method: "GET", pattern: "/api-key", service: "identity", public: false, permission: "apiKeys.read" },
  { method: "DELETE", pattern: "/api-key", service: "identity", public: false, permission: "apiKeys.delete" },
  { method: "GET", pattern: "/api-key/:id", service: "identity", public: false, permission: "apiKeys.read" },
  { method: "DELETE", pattern: "/api-key/:id", service: "identity", public: false, permission: "apiKeys.delete" },
  { method: "POST", pattern: "/api-key/:id/roll", service: "identity", public: false, permission: "apiKeys.create", jwtOnly: true },
  { method: "GET", pattern: "/webhook", service: "webhook-delivery", public: false, permission: "webhooks.read" },
  { method: "POST", pattern: "/webhook", service: "webhook-delivery", public: false, permission: "webhooks.create" },
  { method: "GET", pattern: "/webhook/:id", service: "webhook-delivery", public: false, permission: "webhooks.read" },
  { method: "PUT", pattern: "/webhook/:id", service: "webhook-delivery", public: false, permission: "webhooks.update" },
  { method: "DELETE", pattern: "/webhook/:id", service: "webhook-delivery", public: false, permission: "webhooks.delete" },
  { method: "POST", pattern: "/webhook/:id/test", service: "webhook-delivery", public: false, permission: "webhooks.update" },
  { method: "POST", pattern: "/webhook/:id/rotate-secret", service: "webhook-delivery", public: false, permission: "webhooks.update" },
  { method: "GET", pattern: "/webhook/:id/deliveries", service: "webhook-delivery", public: false, permission: "webhooks.read" },
  { method: "POST", pattern: "/webhook/:id/recover", service: "webhook-delivery", public: false, permission: "webhooks.update" },
  {
    method: "POST",
    pattern: "/webhook/:id/deliveries/:deliveryId/retry",
    service: "webhook-delivery",
    public: false,
    permission: "webhooks.update",
  },
  ...recordEntities.flatMap((entity): RouteDef[] => {
    const resource = recordResourceOf[entity];
    const base = { service: "crm-records" as const, public: false };
    return [
      { ...base, method: "GET", pattern: `/${entity}`, permission: `${resource}.read` },
      { ...base, method: "POST", pattern: `/${entity}`, permission: `${resource}.create` },
      { ...base, method: "POST", pattern: `/${entity}/batch`, permission: `${resource}.create` },
      { ...base, method: "GET", pattern: `/${entity}/:id`, permission: `${resource}.read` },
      { ...base, method: "PATCH", pattern: `/${entity}/:id`, permission: `${resource}.update` },
      { ...base, method: "PUT", pattern: `/${entity}/:id`, permission: `${resource}.update` },
      { ...base, method: "DELETE", pattern: `/${entity}/:id`, permission: `${resource}.delete` },
    ];
  }),
];

interface Compiled {
  method: Method;
  segments: string[];
  match: RouteMatch;
}

const compiled: Compiled[] = defs.map(({ method, pattern, ...rest }) => ({
  method,
  segments: pattern.split("/").filter(Boolean),
  match: { ...rest, name: `${method} ${pattern}` },
}));

export const API_PREFIX = "/api/v1";

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
  return ["GET", "POST", "PUT", "PATCH", "DELETE"].some((m) => matchRoute(m, path) !== undefined);
}
