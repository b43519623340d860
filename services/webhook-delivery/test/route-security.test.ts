// The common security suite (@crm/testing) over every route webhook-delivery declares in
// @crm/contracts: a key without the route's permission gets 401014, another business's webhook or
// delivery 404001.
import { routesOf, type Principal } from "@crm/contracts";
import { databaseModes, runCommonRouteTests, type DeclaredRoute } from "@crm/testing";
import { api, setUpDelivery } from "./support/harness";

/** A body each write accepts, so that only the check under test can refuse it. */
function bodyFor(route: DeclaredRoute, receiverUrl: string): object | undefined {
  const bodies: Record<string, object> = {
    "POST /webhook": { url: receiverUrl, events: ["client.created"] },
    "PUT /webhook/{id}": { description: "renamed" },
    "POST /webhook/{id}/rotate-secret": {},
    "POST /webhook/{id}/recover": { since: new Date(Date.now() - 3_600_000).toISOString() },
  };
  return bodies[`${route.method} ${route.path}`];
}

describe.each(databaseModes)("route security on %s", (mode) => {
  const setup = setUpDelivery(mode);

  /** One webhook and one (test) delivery of it per owner, made on first use. */
  const held = new Map<string, Promise<{ id: string; deliveryId: string }>>();
  function holdings(owner: Principal) {
    if (!held.has(owner.businessId)) {
      const as = api(setup.service, owner);
      held.set(
        owner.businessId,
        (async () => {
          const hook = await as.post("/api/v1/webhook", { url: setup.receiver.url, events: ["client.created"] }).expect(201);
          const delivery = await as.post(`/api/v1/webhook/${hook.body.data.id}/test`).expect(201);
          return { id: hook.body.data.id as string, deliveryId: delivery.body.data.id as string };
        })(),
      );
    }
    return held.get(owner.businessId)!;
  }

  runCommonRouteTests(routesOf("webhook-delivery"), () => ({
    caller: (principal) => api(setup.service, principal),
    ownedIds: async (route, owner) => {
      const ids: Record<string, string> = {};
      if (route.path.includes("{id}")) Object.assign(ids, await holdings(owner));
      return ids;
    },
    body: (route) => bodyFor(route, setup.receiver.url),
  }));
});
