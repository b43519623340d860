// One declaration per public operation (method, path, owning service, permission, JWT-only, request
// and response schemas, error codes). The gateway's route table, the OpenAPI document and each
// service's mounting are all derived from these; nothing else names a route.
import type { RouteConfig } from "@asteasolutions/zod-to-openapi";
import type { ErrorCode } from "@crm/errors";
import type { ZodType } from "zod";
import type { Permission } from "../permissions";
import type { Principal } from "../principal";

/** Every public path starts with this; declarations name the rest. */
export const API_PREFIX = "/api/v1";

export type ServiceName = "identity" | "crm-records" | "webhook-delivery" | "gateway";

export const httpMethods = ["GET", "POST", "PUT", "PATCH", "DELETE"] as const;
export type HttpMethod = (typeof httpMethods)[number];

/** The OpenAPI operation, less what the declaration itself says (method, path, security, error answers). */
export type RouteDocs = Omit<RouteConfig, "method" | "path" | "security">;

export interface Route {
  method: HttpMethod;
  /** Under API_PREFIX, with `{name}` for a path parameter, as the contract and OpenAPI write it. */
  path: string;
  /** The service that serves it; "gateway" for the gateway's own documents. */
  service: ServiceName;
  /** No credentials needed. */
  public?: boolean;
  /** Needed permission; none = any authenticated caller (or nobody, when public). */
  permission?: Permission;
  /** Refused to API keys (401014): actions only a signed-in user may take. */
  jwtOnly?: boolean;
  /**
   * A signed-in user (JWT) whose own user id is the path's `{id}` may call it without `permission`;
   * the service decides what they may change there (extensions §E10: one's own name, email and password).
   */
  openToSelf?: boolean;
  /**
   * The route's own error codes. The document adds those the gateway can answer on any route of its
   * kind (public or authenticated); none at all when undefined (the gateway's documents describe
   * their few answers in `docs.responses`).
   */
  errors?: readonly ErrorCode[];
  /**
   * The query parameters the route takes, when it refuses every other one (400001 naming each
   * unknown parameter, as Stripe does); undefined: other parameters are ignored. The document's
   * query parameters for the route must be exactly these (openApiOperation checks it).
   */
  query?: readonly string[];
  /**
   * How long the service may hold the answer by design (the change feed's `wait`): the gateway waits
   * this much longer than UPSTREAM_TIMEOUT_MS for it.
   */
  waitsUpToMs?: number;
  /**
   * The service claims a request's Idempotency-Key in its own write (crm-records' creates), so its
   * retry after a lost outcome is answered from that claim: the gateway may send such a request again
   * after a lost connection, and frees the key when no answer came back. Without it, a POST that may
   * have reached the service and got no answer keeps its key as in doubt (issue 42).
   */
  keyClaimedByService?: boolean;
  /** The JSON request body: what the service parses it with (requestBody) and what the document shows. */
  body?: { schema: ZodType; required: boolean };
  /**
   * Its OpenAPI operation: tags, summary, other request parts, success responses; none: not in the
   * document. A function: the schemas made only for the document (envelopes, query and header
   * objects, some MB for all routes) are built by the one process that serves it, when it does.
   */
  docs?: () => RouteDocs;
}

/** Declares a route; the literal type is kept, so a service mounts exactly what was declared. */
export function defineRoute<const R extends Route>(route: R): R {
  return route;
}

/**
 * Whether `principal` may call `route` as far as its `permission` goes (jwtOnly is checked apart):
 * holding the permission, or, on a route open to self, being the signed-in user the path names.
 * `pathId` gives the path's `{id}`; it is asked only when the permission is missing. The gateway and
 * the service both decide with this.
 */
export function mayCallRoute(
  route: Pick<Route, "permission" | "openToSelf">,
  principal: Pick<Principal, "authType" | "userId" | "permissions">,
  pathId: () => string | undefined,
): boolean {
  if (route.permission === undefined || principal.permissions.includes(route.permission)) return true;
  return route.openToSelf === true && principal.authType === "jwt" && principal.userId !== null && pathId() === principal.userId;
}

/** "/webhook/{id}" -> "/webhook/:id": the form Express and the gateway's matcher read. */
export function expressPath(path: string): string {
  return path.replace(/\{([^}]+)\}/g, ":$1");
}

/** "GET /client/:id": a stable name for logs and metrics. */
export function routeName(route: Pick<Route, "method" | "path">): string {
  return `${route.method} ${expressPath(route.path)}`;
}
