// The checks every authenticated route must pass, run for each declared route of a service against
// the service itself (as Unkey's runCommonRouteTests does): a principal without the route's
// permission is refused with 401014 before anything is read, an API key on a route only a signed-in
// user may take likewise, and another business's id is not found (404001, never 403: interface §2).
// For the records, runRelationPermissionTests adds extensions §E10's rule on `include`.
import {
  allPermissions,
  API_PREFIX,
  permission,
  recordContracts,
  recordEntities,
  recordResourceOf,
  recordRoutes,
  uuidv7,
  type Principal,
  type RecordRelation,
} from "@crm/contracts";
import { principalFor, type InternalCaller } from "./service-harness";

/** What the suite reads of a route declaration (@crm/contracts' Route). */
export interface DeclaredRoute {
  method: string;
  /** Under API_PREFIX, path parameters written `{name}`. */
  path: string;
  permission?: string;
  jwtOnly?: boolean;
  public?: boolean;
}

export interface RouteSecurityTarget {
  /** Requests to the service under test, for `principal`. */
  caller(principal: Principal): InternalCaller;
  /** A principal of a new business holding every permission (a random business id unless the service needs a real one). */
  newOwner?(): Promise<Principal>;
  /**
   * Creates, as `owner`, what the route's path parameters name and returns them by parameter name
   * (the same resources may serve several routes).
   */
  ownedIds(route: DeclaredRoute, owner: Principal): Promise<Record<string, string>>;
  /** A body the route would accept, so that only the check under test can refuse the request. */
  body?(route: DeclaredRoute): object | undefined;
}

const NOT_FOUND = { code: 404001, message: "Resource not found" };
const NO_PERMISSION = { code: 401014, message: "Insufficient permissions for this action" };

/** `route`'s path parameters, in order. */
export function pathParameters(route: DeclaredRoute): string[] {
  return [...route.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!);
}

/** The route's concrete path under API_PREFIX, its parameters filled in from `ids`. */
function fill(route: DeclaredRoute, ids: Record<string, string>): string {
  return (
    API_PREFIX +
    route.path.replace(/\{(\w+)\}/g, (_m, name: string) => {
      const id = ids[name];
      if (!id) throw new Error(`${route.method} ${route.path}: no id for {${name}}`);
      return id;
    })
  );
}

function send(caller: InternalCaller, route: DeclaredRoute, path: string, body: object | undefined) {
  const method = route.method.toLowerCase() as "get" | "post" | "put" | "patch" | "delete";
  if (method === "get" || method === "delete") return caller[method](path);
  return caller[method](path, body);
}

const uuid = uuidv7;

/** The outcome the suite expects of one request: the route's name, the status and the error body. */
type Outcome = [string, number, unknown];

/**
 * Registers the common security tests of a service's routes (the authenticated ones: public routes
 * have no principal to refuse), as declared in @crm/contracts. `target` is read when the tests run,
 * after the file's beforeAll; each test tries every route and shows every route that answered otherwise at once.
 */
export function runCommonRouteTests(routes: readonly DeclaredRoute[], target: () => RouteSecurityTarget): void {
  const guarded = () => routes.filter((r) => !r.public);
  const name = (r: DeclaredRoute) => `${r.method} ${r.path}`;

  /** Asks each route as `who(...)` about what `owner` owns; every answer must be `status` with `error`. */
  type Who = (owner: Principal, route: DeclaredRoute, stranger: Principal) => Principal;
  async function check(cases: Array<[DeclaredRoute, Who]>, status: number, error: object): Promise<void> {
    expect(cases.length).toBeGreaterThan(0);
    const t = target();
    const newOwner = t.newOwner ?? (async () => principalFor(uuid()));
    const owner = await newOwner();
    const stranger = await newOwner();
    const answers: Outcome[] = [];
    for (const [route, who] of cases) {
      const ids = await t.ownedIds(route, owner);
      const res = await send(t.caller(who(owner, route, stranger)), route, fill(route, ids), t.body?.(route));
      answers.push([name(route), res.status, res.body?.error]);
    }
    expect(answers).toEqual(cases.map(([r]): Outcome => [name(r), status, error]));
  }

  const keyWithoutThePermission: Who = (owner, route) =>
    principalFor(
      owner.businessId,
      allPermissions.filter((p) => p !== route.permission),
      "apiKey",
    );
  const keyWithEveryPermission: Who = (owner) => principalFor(owner.businessId, allPermissions, "apiKey");
  it("every route with a permission refuses an API key without it, and one only a signed-in user may take any API key (401014)", () =>
    check(
      [
        ...guarded()
          .filter((r) => r.permission)
          .map((r): [DeclaredRoute, Who] => [r, keyWithoutThePermission]),
        ...guarded()
          .filter((r) => r.jwtOnly)
          .map((r): [DeclaredRoute, Who] => [r, keyWithEveryPermission]),
      ],
      401,
      NO_PERMISSION,
    ));

  it("every route with an id finds nothing of another business (404001), whatever the caller may do", () =>
    check(
      guarded()
        .filter((r) => pathParameters(r).length > 0)
        .map((r): [DeclaredRoute, Who] => [r, (_owner, _route, stranger) => stranger]),
      404,
      NOT_FOUND,
    ));
}

/** What runRelationPermissionTests needs beyond a RouteSecurityTarget. */
export interface RelationSecurityTarget extends RouteSecurityTarget {
  /** meta.nextCursor of `owner`'s list `route` (GET /{entity}): the business holds two records of it at least. */
  cursor(route: DeclaredRoute, owner: Principal): Promise<string>;
}

/**
 * Extensions §E10, for every entity and every relation it has: an API key that may read the entity but
 * not the relation's target gets 401014 when it names the relation in `include` (one record, a list, a
 * list after a cursor), and a default relation is left out of its answers; a key that may read both
 * gets the relation. `include=-name` of a default relation needs nothing more.
 */
export function runRelationPermissionTests(target: () => RelationSecurityTarget): void {
  type Answer = [string, number, unknown];
  const cases = recordEntities.flatMap((entity) =>
    Object.entries(recordContracts[entity].relations as Readonly<Record<string, RecordRelation>>).map(([relation, spec]) => ({
      entity,
      relation,
      isDefault: spec.default,
      own: permission(recordResourceOf[entity], "read"),
      theirs: permission(recordResourceOf[spec.target], "read"),
    })),
  );

  it("include obeys permissions: a named relation the key may not read is 401014, a default one is left out, both read gives it (extensions §E10)", async () => {
    expect(cases.length).toBeGreaterThan(0);
    const t = target();
    const owner = await (t.newOwner ?? (async () => principalFor(uuid())))();
    const expected: Answer[] = [];
    const answers: Answer[] = [];
    for (const c of cases) {
      const routes = recordRoutes[c.entity];
      const id = (await t.ownedIds(routes.get, owner))["id"]!;
      const cursor = encodeURIComponent(await t.cursor(routes.list, owner));
      const list = `${API_PREFIX}/${c.entity}`;
      const reads = (include: string) =>
        [
          [`GET /${c.entity}/{id}?${include}`, `${list}/${id}?${include}`, false],
          [`GET /${c.entity}?${include}`, `${list}?${include}`, true],
          [`GET /${c.entity}?cursor&${include}`, `${list}?cursor=${cursor}&${include}`, true],
        ] as const;
      /** Whether each record of the answer carries the relation, or the error of a refusal. */
      const ask = async (who: Principal, name: string, path: string, many: boolean): Promise<Answer> => {
        const res = await t.caller(who).get(path);
        if (res.status !== 200) return [name, res.status, res.body?.error];
        const records: Array<Record<string, unknown>> = many ? res.body.data : [res.body.data];
        if (records.length === 0) return [name, 200, "no record to look at"];
        return [name, 200, records.every((r) => c.relation in r) ? "has it" : records.some((r) => c.relation in r) ? "some have it" : "left out"];
      };
      const key = (permissions: string[]) => principalFor(owner.businessId, permissions, "apiKey");
      const entityOnly = key([c.own]);
      const both = key([c.own, c.theirs]);
      for (const [name, path, many] of reads(`include=${c.relation}`)) {
        answers.push(await ask(entityOnly, `${name} without ${c.theirs}`, path, many));
        expected.push([`${name} without ${c.theirs}`, 401, NO_PERMISSION]);
        answers.push(await ask(both, `${name} with ${c.theirs}`, path, many));
        expected.push([`${name} with ${c.theirs}`, 200, "has it"]);
      }
      if (!c.isDefault) continue;
      for (const include of ["", `include=-${c.relation}`]) {
        for (const [name, path, many] of reads(include)) {
          answers.push(await ask(entityOnly, `${name} without ${c.theirs}`, path, many));
          expected.push([`${name} without ${c.theirs}`, 200, "left out"]);
        }
      }
      for (const [name, path, many] of reads("")) {
        answers.push(await ask(both, `${name} with ${c.theirs}`, path, many));
        expected.push([`${name} with ${c.theirs}`, 200, "has it"]);
      }
    }
    expect(answers).toEqual(expected);
  });
}
