// The common security suite (@crm/testing) over every route webhook-delivery declares in
// @crm/contracts: a key without the route's permission gets 401014, another business's webhook or
// delivery 404001; and what a webhook receives needs read permission on it (extensions §E10).
import { allPermissions, permission, recordEntities, recordResourceOf, routesOf, uuidv7, type Principal } from "@crm/contracts";
import { databaseModes, principalFor, runCommonRouteTests, type DeclaredRoute } from "@crm/testing";
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

  it("subscribing to an entity's events needs its read permission, on create and on a PUT that changes what is sent (extensions §E10)", async () => {
    const businessId = uuidv7();
    const owner = api(setup.service, principalFor(businessId));
    const url = setup.receiver.url;
    const key = (permissions: string[]) => api(setup.service, principalFor(businessId, permissions, "apiKey"));
    const answers: Array<[string, number, unknown]> = [];
    const expected: Array<[string, number, unknown]> = [];
    const refused = { code: 401014, message: "Insufficient permissions for this action" };
    const outcome = async (name: string, request: Promise<{ status: number; body: { error?: unknown } }>, status: number) => {
      const res = await request;
      answers.push([name, res.status, res.body.error]);
      expected.push([name, status, status === 401 ? refused : undefined]);
    };
    for (const entity of recordEntities) {
      const read = permission(recordResourceOf[entity], "read");
      // Every permission but this entity's read: only the rule under test can refuse.
      const without = key(allPermissions.filter((p) => p !== read));
      const withRead = key(["webhooks.create", "webhooks.update", read]);
      const events = [`${entity}.created`, `${entity}.updated`, `${entity}.deleted`];
      await outcome(`create ${entity}.* without ${read}`, without.post("/api/v1/webhook", { url, events }), 401);
      await outcome(
        `create ${entity}.deleted beside client.created without ${read}`,
        without.post("/api/v1/webhook", { url, events: ["client.created", `${entity}.deleted`] }),
        401,
      );
      await outcome(`create ${entity}.* with only webhooks.create and ${read}`, withRead.post("/api/v1/webhook", { url, events }), 201);

      const other = entity === "client" ? "employee" : "client";
      const hook = (await owner.post("/api/v1/webhook", { url, events: [`${other}.created`] }).expect(201)).body.data;
      const subscribed = (await owner.post("/api/v1/webhook", { url, events: [`${entity}.created`] }).expect(201)).body.data;
      const otherRead = permission(recordResourceOf[other], "read");
      const updater = key(allPermissions.filter((p) => p !== read));
      await outcome(`PUT events to ${entity}.created without ${read}`, updater.put(`/api/v1/webhook/${hook.id}`, { events: [`${other}.created`, `${entity}.created`] }), 401);
      await outcome(`PUT url of a ${entity}.* webhook without ${read}`, updater.put(`/api/v1/webhook/${subscribed.id}`, { url: `${url}?moved` }), 401);
      await outcome(`PUT filter of a ${entity}.* webhook without ${read}`, updater.put(`/api/v1/webhook/${subscribed.id}`, { filter: "id:x" }), 401);
      await outcome(
        `PUT the same events, description and isActive without ${read}`,
        updater.put(`/api/v1/webhook/${subscribed.id}`, { events: [`${entity}.created`], description: "renamed", isActive: true }),
        200,
      );
      await outcome(
        `PUT events to ${entity}.created with ${read}`,
        key(["webhooks.update", read, otherRead]).put(`/api/v1/webhook/${hook.id}`, { events: [`${other}.created`, `${entity}.created`] }),
        200,
      );
    }
    expect(answers).toEqual(expected);
  });
});
