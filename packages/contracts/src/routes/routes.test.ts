import { apiRoutes, mayCallRoute, routeName } from "./index";
import type { Route } from "./route";

/**
 * Whether one request could match both `a` and `b` with `b` answering it wrongly: same method, same
 * length, each segment equal or a parameter in either, unless `a` (declared first, so the gateway
 * takes it) has a literal where `b` first has a parameter: `GET /client/fields` before
 * `GET /client/{id}` is how a literal segment never reads as an id (extensions §E4).
 */
function overlap(a: Route, b: Route): boolean {
  const sa = a.path.split("/");
  const sb = b.path.split("/");
  if (a.method !== b.method || sa.length !== sb.length) return false;
  if (!sa.every((s, i) => s === sb[i] || s.startsWith("{") || sb[i]!.startsWith("{"))) return false;
  const first = sa.findIndex((s, i) => s !== sb[i]);
  return first === -1 || !(sb[first]!.startsWith("{") && !sa[first]!.startsWith("{"));
}

describe("route declarations", () => {
  it("declare each method and path once, and no two that one request could match but by the first's literal segment (the gateway takes the first)", () => {
    const clashes = apiRoutes.flatMap((a, i) =>
      apiRoutes
        .slice(i + 1)
        .filter((b) => overlap(a, b))
        .map((b) => `${routeName(a)} ~ ${routeName(b)}`),
    );
    expect(clashes).toEqual([]);
  });

  it("give a public route no permission, and a JWT-only route a permission", () => {
    expect(apiRoutes.filter((route) => route.public && (route.permission || route.jwtOnly)).map(routeName)).toEqual([]);
    expect(apiRoutes.filter((route) => route.jwtOnly && !route.permission).map(routeName)).toEqual([]);
  });

  it("name in each documented summary the permission and JWT-only rule the declaration enforces", () => {
    const unsaid = apiRoutes
      .filter((route) => route.docs)
      .filter(
        (route) => (route.permission && !route.docs?.().summary?.includes(`permission ${route.permission}`)) || (route.jwtOnly && !route.docs?.().summary?.includes("JWT only")),
      )
      .map(routeName);
    expect(unsaid).toEqual([]);
  });

  it("open a route to self only where its path has an {id} and a permission to fall back on", () => {
    expect(apiRoutes.filter((route) => route.openToSelf && (!route.path.includes("{id}") || !route.permission || route.public)).map(routeName)).toEqual([]);
    expect(apiRoutes.filter((route) => route.openToSelf).map(routeName)).toEqual(["PATCH /user/:id", "PUT /user/:id"]);
  });
});

describe("mayCallRoute", () => {
  const route = { permission: "users.update", openToSelf: true } as const;
  const user = (userId: string, permissions: string[] = []) => ({ authType: "jwt" as const, userId, permissions });
  const askedFor = (id: string) => () => id;

  it("lets through who holds the permission, without asking for the path's id", () => {
    const notAsked = () => {
      throw new Error("the path's id was asked for");
    };
    expect(mayCallRoute(route, user("u1", ["users.update"]), notAsked)).toBe(true);
    expect(mayCallRoute({}, user("u1"), askedFor("u2"))).toBe(true);
  });

  it("on a route open to self, lets through the signed-in user the path names, and nobody else", () => {
    expect(mayCallRoute(route, user("u1"), askedFor("u1"))).toBe(true);
    expect(mayCallRoute(route, user("u1"), askedFor("u2"))).toBe(false);
    expect(mayCallRoute(route, { authType: "apiKey", userId: null, permissions: [] }, askedFor("u1"))).toBe(false);
    expect(mayCallRoute(route, { authType: "apiKey", userId: "u1", permissions: [] }, askedFor("u1"))).toBe(false);
    expect(mayCallRoute({ permission: "users.update" }, user("u1"), askedFor("u1"))).toBe(false);
  });
});
