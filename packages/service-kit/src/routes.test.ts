import express, { type Request } from "express";
import request from "supertest";
import { defineRoute, type Principal, z } from "@crm/contracts";
import { errorMiddleware, isAppError } from "@crm/errors";
import { mountChecksInOneLayer, mountRoute, requestBody } from "./routes";

const withBody = defineRoute({
  method: "POST",
  path: "/thing",
  service: "crm-records",
  permission: "clients.create",
  body: { schema: z.object({ name: z.string() }).strict(), required: true },
});
const req = (body: unknown) => ({ body }) as Request;

describe("requestBody", () => {
  it("validates the body with the schema the route declares; no body counts as {}", () => {
    expect(requestBody(withBody, req({ name: "a" }))).toEqual({ name: "a" });
    for (const body of [undefined, { name: 1 }, { name: "a", extra: true }]) {
      let thrown: unknown;
      try {
        requestBody(withBody, req(body));
      } catch (err) {
        thrown = err;
      }
      expect(isAppError(thrown) && thrown.code).toBe(400001);
    }
  });
});

const listThings = defineRoute({ method: "GET", path: "/thing/{id}", service: "crm-records", permission: "clients.read", query: ["page"] });
const asCaller = (permissions: string[]) => ({ businessId: "b1", authType: "jwt", userId: "u1", apiKeyId: null, sessionId: "s1", jti: "j1", permissions }) as unknown as Principal;

// Both ways: LEAN_REQUEST_CONTEXT=false mounts the checks as middleware of their own (docs/performance.md D12).
describe.each([true, false])("mountRoute (LEAN_REQUEST_CONTEXT=%s)", (oneLayer) => {
  beforeAll(() => mountChecksInOneLayer(oneLayer));
  afterAll(() => mountChecksInOneLayer(true));

  function app(principal: Principal): { app: express.Express; layers: number } {
    const router = express.Router();
    mountRoute(router, listThings, (req, res) => void res.json({ id: req.params.id, query: req.query }));
    const a = express();
    a.use((req, _res, next) => {
      req.principal = principal;
      next();
    });
    a.use(router);
    a.use(errorMiddleware(() => ({ error: () => undefined, warn: () => undefined, info: () => undefined })));
    return { app: a, layers: (router.stack[0] as unknown as { route: { stack: unknown[] } }).route.stack.length };
  }

  it("runs the handler for a caller with the route's permission and the parameters it takes", async () => {
    const { app: a, layers } = app(asCaller(["clients.read"]));
    expect(layers).toBe(oneLayer ? 1 : 3);
    const res = await request(a).get("/thing/t1?page=2");
    expect([res.status, res.body]).toEqual([200, { id: "t1", query: { page: "2" } }]);
  });

  it("refuses a caller without the permission 401014, and a parameter the route does not take 400001", async () => {
    const refused = await request(app(asCaller([])).app).get("/thing/t1");
    expect([refused.status, refused.body.error.code]).toEqual([401, 401014]);
    const unknown = await request(app(asCaller(["clients.read"])).app).get("/thing/t1?sort=name");
    expect([unknown.status, unknown.body.error.code, unknown.body.error.details[0].path]).toEqual([400, 400001, "sort"]);
  });
});
