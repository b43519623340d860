// The common security suite (@crm/testing) over every route identity declares in @crm/contracts: a
// key without the route's permission gets 401014, an API key on a route only a signed-in user may
// take likewise, another business's id 404001.
import { routesOf, type Principal } from "@crm/contracts";
import { describeEachMode, internalCaller, runCommonRouteTests, type DeclaredRoute } from "@crm/testing";
import { openHarness, PASSWORD, uniqueEmail, type Harness } from "./harness";

/** A body each write accepts, so that only the check under test can refuse it. */
function bodyFor(route: DeclaredRoute): object | undefined {
  const bodies: Record<string, object> = {
    "POST /user": { email: uniqueEmail("new"), password: PASSWORD, role: "MEMBER" },
    "PATCH /user/{id}": { firstName: "Renamed" },
    "PUT /user/{id}": { firstName: "Renamed" },
    "POST /api-key": { name: "k", scopes: ["clients.read"] },
    "POST /api-key/{id}/roll": {},
    "DELETE /api-key": {},
  };
  return bodies[`${route.method} ${route.path}`];
}

describeEachMode("route security on %s", (mode) => {
  let h: Harness;
  beforeAll(async () => {
    h = await openHarness(mode);
  });
  afterAll(() => h?.close());

  /** What an owner's business holds: one user besides the owner and one API key, made on first use. */
  const held = new Map<string, Promise<{ user: string; key: string }>>();
  function holdings(owner: Principal) {
    if (!held.has(owner.businessId)) {
      const as = internalCaller(h.app, owner);
      held.set(
        owner.businessId,
        (async () => {
          const user = await as.post("/api/v1/user", { email: uniqueEmail("member"), password: PASSWORD, role: "MEMBER" }).expect(201);
          const key = await as.post("/api/v1/api-key", { name: "held", scopes: ["clients.read"] }).expect(201);
          return { user: user.body.data.id as string, key: key.body.data.id as string };
        })(),
      );
    }
    return held.get(owner.businessId)!;
  }

  runCommonRouteTests(routesOf("identity"), () => ({
    caller: (principal) => internalCaller(h.app, principal),
    // Identity's rows belong to real businesses: each owner signs one up.
    newOwner: async () => {
      const res = await h.pub("/api/v1/auth/sign-up").send({ businessName: "Acme", email: uniqueEmail("owner"), password: PASSWORD, firstName: "Ada" });
      if (res.status !== 201) throw new Error(`sign-up failed: ${res.status} ${JSON.stringify(res.body)}`);
      return h.principalOf(res.body.data.accessToken);
    },
    ownedIds: async (route, owner) => {
      const ids: Record<string, string> = {};
      if (route.path.includes("{id}")) {
        const { user, key } = await holdings(owner);
        ids["id"] = route.path.startsWith("/user/") ? user : key;
      }
      return ids;
    },
    body: bodyFor,
  }));
});
