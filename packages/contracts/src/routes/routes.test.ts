import { apiRoutes, routeName } from "./index";
import type { Route } from "./route";

/** Whether one request could match both (same method, same length, each segment equal or a parameter in either). */
function overlap(a: Route, b: Route): boolean {
  const sa = a.path.split("/");
  const sb = b.path.split("/");
  return a.method === b.method && sa.length === sb.length && sa.every((s, i) => s === sb[i] || s.startsWith("{") || sb[i]!.startsWith("{"));
}

describe("route declarations", () => {
  it("declare each method and path once, and no two that one request could match (the gateway takes the first)", () => {
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
});
