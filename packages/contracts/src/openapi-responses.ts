import type { RouteConfig } from "@asteasolutions/zod-to-openapi";
import { errorCatalogue, type ErrorCode } from "@crm/errors";
import type { ZodType } from "zod";
import { errorEnvelopeSchema } from "./envelope";

/** `{ content: { "application/json": { schema } } }` for OpenAPI request bodies and responses. */
export const jsonContent = <S extends ZodType>(schema: S) => ({ content: { "application/json": { schema } } });

/** Errors the gateway can answer on any authenticated route, besides the route's own. */
export const AUTHENTICATED_ROUTE_ERRORS: readonly ErrorCode[] = [401000, 401010, 401011, 401014, 401015, 401020, 401021, 401022, 403000, 403001, 429000, 500000];

/** Errors the gateway or the service can answer on any public route, besides the route's own. */
export const PUBLIC_ROUTE_ERRORS: readonly ErrorCode[] = [400001, 400002, 403000, 413000, 415000, 429000, 500000];

/** Error responses grouped by HTTP status, each description listing its codes and catalogue messages. */
export function errorResponses(codes: readonly ErrorCode[], base: readonly ErrorCode[] = AUTHENTICATED_ROUTE_ERRORS): RouteConfig["responses"] {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of [...codes, ...base]) {
    const status = errorCatalogue[code].status;
    const list = byStatus.get(status) ?? [];
    if (!list.includes(code)) list.push(code);
    byStatus.set(status, list);
  }
  const responses: RouteConfig["responses"] = {};
  for (const [status, list] of byStatus) {
    responses[String(status)] = { description: list.map((code) => `${code} ${errorCatalogue[code].message}`).join("; "), ...jsonContent(errorEnvelopeSchema) };
  }
  return responses;
}
