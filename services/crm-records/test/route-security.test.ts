// The common security suite (@crm/testing) over every route crm-records declares in @crm/contracts:
// a key without the route's permission gets 401014, another business's id 404001; and `include` obeys
// the permissions of the relation's resource (extensions §E10).
import { allPermissions, routesOf, type Principal } from "@crm/contracts";
import { describeEachMode, internalCaller, runCommonRouteTests, runRelationPermissionTests, type DeclaredRoute, type RouteSecurityTarget } from "@crm/testing";
import { sharedHarness, SECRET } from "./harness";

const item = { description: "Work", quantity: 1, unitPrice: 100 };

/** A body each entity's create accepts; contacts, invoices and quotes name a client of the same business. */
function createBody(entity: string, clientId: string): object {
  const bodies: Record<string, object> = {
    client: { firstName: "Ada", lastName: "Lovelace" },
    contact: { clientId, type: "EMAIL", value: "a@example.com" },
    invoice: { clientId, items: [item] },
    quote: { clientId, items: [item] },
    product: { name: "A product" },
    service: { name: "A service" },
    employee: { firstName: "A", lastName: "Employee" },
  };
  return bodies[entity] ?? {};
}

describeEachMode("route security on %s", (mode) => {
  const h = sharedHarness(mode);

  const entityOf = (route: DeclaredRoute) => route.path.split("/")[1]!;

  /** A new record of `entity` in `owner`'s business; contacts, invoices and quotes of a new client. */
  async function createRecord(owner: Principal, entity: string): Promise<string> {
    const clientId = entity === "client" ? "" : await createRecord(owner, "client");
    const res = await internalCaller(h.app, owner, { prefix: "/api/v1" }).post(`/${entity}`, createBody(entity, clientId));
    if (res.status !== 201) throw new Error(`${entity} create failed: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body.data.id as string;
  }

  /** One record per entity and business, created on first use. */
  function created(owner: Principal, entity: string): Promise<string> {
    const key = `${owner.businessId}/${entity}`;
    if (!held.has(key)) held.set(key, createRecord(owner, entity));
    return held.get(key)!;
  }
  const held = new Map<string, Promise<string>>();

  /** A custom field definition of `entity` in `owner`'s business (extensions §E4), defined on first use by an administrator. */
  function definedField(owner: Principal, entity: string): Promise<string> {
    const key = `${owner.businessId}/${entity}/field`;
    if (!held.has(key)) {
      const admin = { ...owner, permissions: [...allPermissions] };
      held.set(
        key,
        internalCaller(h.app, admin, { prefix: "/api/v1" })
          .post(`/${entity}/fields`, { key: "externalId", label: "External id", type: "text" })
          .then((res) => {
            if (res.status !== 201) throw new Error(`${entity} field create failed: ${res.status} ${JSON.stringify(res.body)}`);
            return res.body.data.key as string;
          }),
      );
    }
    return held.get(key)!;
  }

  const target = (): RouteSecurityTarget => ({
    caller: (principal) => internalCaller(h.app, principal, { secret: SECRET }),
    ownedIds: async (route, owner) => {
      const ids: Record<string, string> = {};
      if (route.path.includes("{id}")) ids["id"] = await created(owner, entityOf(route));
      if (route.path.includes("{key}")) ids["key"] = await definedField(owner, entityOf(route));
      return ids;
    },
    body: (route) => (route.method !== "POST" ? {} : route.path.endsWith("/fields") ? { key: "another", label: "Another", type: "text" } : createBody(entityOf(route), "")),
  });
  runCommonRouteTests(routesOf("crm-records"), target);

  runRelationPermissionTests(() => ({
    ...target(),
    cursor: async (route, owner) => {
      const entity = entityOf(route);
      await created(owner, entity);
      await createRecord(owner, entity);
      const res = await internalCaller(h.app, owner, { prefix: "/api/v1" }).get(`/${entity}?perPage=1`);
      if (typeof res.body?.meta?.nextCursor !== "string") throw new Error(`${entity}: no cursor: ${res.status} ${JSON.stringify(res.body)}`);
      return res.body.meta.nextCursor as string;
    },
  }));
});
