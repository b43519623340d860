// The common security suite (@crm/testing) over every route crm-records declares in @crm/contracts:
// a key without the route's permission gets 401014, another business's id 404001.
import { routesOf } from "@crm/contracts";
import { describeEachMode, internalCaller, runCommonRouteTests, type DeclaredRoute } from "@crm/testing";
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

  /** One record per entity and business, created on first use. */
  const created = new Map<string, Promise<string>>();
  const entityOf = (route: DeclaredRoute) => route.path.split("/")[1]!;

  runCommonRouteTests(routesOf("crm-records"), () => ({
    caller: (principal) => internalCaller(h.app, principal, { secret: SECRET }),
    ownedIds: async (route, owner) => {
      const create = (entity: string): Promise<string> => {
        const key = `${owner.businessId}/${entity}`;
        if (!created.has(key)) {
          const body = async () => createBody(entity, entity === "client" ? "" : await create("client"));
          created.set(
            key,
            body().then(async (b) => {
              const res = await internalCaller(h.app, owner, { prefix: "/api/v1" }).post(`/${entity}`, b);
              if (res.status !== 201) throw new Error(`${entity} create failed: ${res.status} ${JSON.stringify(res.body)}`);
              return res.body.data.id as string;
            }),
          );
        }
        return created.get(key)!;
      };
      const ids: Record<string, string> = {};
      if (route.path.includes("{id}")) ids["id"] = await create(entityOf(route));
      return ids;
    },
    body: (route) => (route.method === "POST" ? createBody(entityOf(route), "") : {}),
  }));
});
