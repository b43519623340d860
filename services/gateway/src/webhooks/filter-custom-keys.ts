// Extensions §E1.5 with §E4: a webhook `filter` may name `customFields.<key>` only for a key every
// subscribed entity defines and has not archived (else 400001 at `filter`, as for a built-in field
// the entity lacks). webhook-delivery checks the filter but crm-records owns the definitions; the
// gateway reaches both, so on a webhook create or PUT whose filter mentions custom fields it asks
// crm-records for the definitions (as the caller: entities the caller cannot read are left out, and
// webhook-delivery answers those 401014 anyway, extensions §E10) and passes the active keys among
// those mentioned in CUSTOM_FIELD_TYPES_HEADER, which the forwarder never takes from a client.
import {
  API_PREFIX,
  CUSTOM_FIELD_KEY_PATTERN,
  CUSTOM_FIELD_TYPES_HEADER,
  CUSTOM_FIELDS_PROPERTY,
  customFieldRoutes,
  type CustomFieldDefinitionView,
  type CustomFieldType,
  type Principal,
  recordEntities,
  routeName,
  webhookRoutes,
} from "@crm/contracts";
import type { Request } from "express";
import type { Forwarder } from "../http/forwarder";
import type { RouteMatch } from "../http/route-table";

const CREATE = routeName(webhookRoutes.create);
const UPDATE = routeName(webhookRoutes.update);
const MENTIONED = new RegExp(`${CUSTOM_FIELDS_PROPERTY}\\.([A-Za-z0-9]+)`, "g");

/**
 * The custom keys a filter mentions (every `customFields.<key>` in its text, values included: a
 * superset of the fields it names, which webhook-delivery parses exactly).
 */
export function customKeysMentioned(filter: unknown): string[] {
  if (typeof filter !== "string") return [];
  const keys = new Set<string>();
  for (const match of filter.matchAll(MENTIONED)) if (CUSTOM_FIELD_KEY_PATTERN.test(match[1]!)) keys.add(match[1]!);
  return [...keys];
}

function bodyOf(raw: Buffer | undefined): { filter?: unknown; events?: unknown } | undefined {
  if (raw === undefined) return undefined;
  try {
    const body: unknown = JSON.parse(raw.toString("utf8"));
    return body !== null && typeof body === "object" && !Array.isArray(body) ? body : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The filter a webhook write will be checked with: the body's, or, for a PUT that changes only
 * `events`, the stored one (webhook-delivery checks the filter against the new events).
 */
async function filterOf(forwarder: Pick<Forwarder, "ask">, route: Pick<RouteMatch, "name">, req: Request, principal: Principal): Promise<unknown> {
  const body = bodyOf(req.rawBody);
  if (body === undefined) return undefined;
  if (body.filter !== undefined || route.name !== UPDATE || body.events === undefined) return body.filter;
  const id = req.path.slice(req.path.lastIndexOf("/") + 1);
  const answer = await forwarder.ask("webhook-delivery", `${API_PREFIX}/webhook/${id}`, principal, req.requestId);
  return answer.status === 200 ? (JSON.parse(answer.body.toString("utf8")) as { data: { filter?: unknown } }).data.filter : undefined;
}

/**
 * For a webhook create or PUT whose filter mentions custom keys: the header telling webhook-delivery,
 * per entity the caller may read, which of those keys it defines as active, and their types.
 * Undefined otherwise.
 */
export async function webhookFilterHeaders(
  forwarder: Pick<Forwarder, "ask">,
  route: Pick<RouteMatch, "name">,
  req: Request,
  principal: Principal,
): Promise<Record<string, string> | undefined> {
  if (route.name !== CREATE && route.name !== UPDATE) return undefined;
  const keys = customKeysMentioned(await filterOf(forwarder, route, req, principal));
  if (keys.length === 0) return undefined;
  const defined: Record<string, Record<string, CustomFieldType>> = {};
  await Promise.all(
    recordEntities.map(async (entity) => {
      const answer = await forwarder.ask("crm-records", `${API_PREFIX}${customFieldRoutes[entity].listFields.path}`, principal, req.requestId);
      if (answer.status !== 200) return;
      const definitions = (JSON.parse(answer.body.toString("utf8")) as { data: CustomFieldDefinitionView[] }).data;
      const active = definitions.filter((definition) => !definition.isArchived && keys.includes(definition.key));
      defined[entity] = Object.fromEntries(active.map((definition) => [definition.key, definition.type]));
    }),
  );
  return { [CUSTOM_FIELD_TYPES_HEADER]: JSON.stringify(defined) };
}
