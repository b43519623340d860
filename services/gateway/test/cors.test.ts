// The CORS matrix: {API key, JWT, none} x {allowed origin, other origin, null} x {simple, preflight}.
import supertest from "supertest";
import { MemoryKvStore } from "@crm/kv-store";
import { buildGateway, FakeIdentity, type Gateway } from "./support/security.fixture";

const ALLOWED = "https://app.example.com";
const OTHER = "https://evil.example.net";

describe("gateway CORS", () => {
  let kv: MemoryKvStore;
  let identity: FakeIdentity;
  let gw: Gateway;
  let creds: Record<"apiKey" | "jwt" | "none", Record<string, string>>;

  beforeAll(async () => {
    kv = new MemoryKvStore();
    identity = new FakeIdentity(kv);
    await identity.start();
    gw = buildGateway(kv, identity.url, { RATE_LIMIT_MAX: 5 });
    const owner = await identity.addUser("OWNER");
    creds = {
      apiKey: { "x-api-key": (await identity.createKey(owner)).key },
      jwt: { authorization: `Bearer ${(await identity.signIn(owner)).token}` },
      none: {},
    };
  });
  afterAll(async () => {
    await gw.security.close();
    await identity.stop();
    await kv.close();
  });

  const simple = (origin: string, headers: Record<string, string>) => supertest(gw.app).get("/api/v1/client").set("origin", origin).set(headers);
  const preflight = (origin: string) =>
    supertest(gw.app).options("/api/v1/client").set("origin", origin).set("access-control-request-method", "GET").set("access-control-request-headers", "authorization, x-api-key");

  type Expectation = { acao?: string; credentials: boolean; status: number };
  const check = (res: supertest.Response, want: Expectation) => {
    expect(res.status).toBe(want.status);
    expect(res.headers["access-control-allow-origin"]).toBe(want.acao);
    expect(res.headers["access-control-allow-credentials"]).toBe(want.credentials ? "true" : undefined);
    if (want.acao && want.acao !== "*") expect(res.headers.vary).toMatch(/Origin/);
  };

  const simpleCases: Array<[keyof typeof creds, string, Expectation]> = [
    ["apiKey", ALLOWED, { acao: "*", credentials: false, status: 200 }],
    ["apiKey", OTHER, { acao: "*", credentials: false, status: 200 }],
    ["apiKey", "null", { acao: undefined, credentials: false, status: 403 }],
    ["jwt", ALLOWED, { acao: ALLOWED, credentials: true, status: 200 }],
    ["jwt", OTHER, { acao: undefined, credentials: false, status: 200 }],
    ["jwt", "null", { acao: undefined, credentials: false, status: 403 }],
    ["none", ALLOWED, { acao: ALLOWED, credentials: true, status: 401 }],
    ["none", OTHER, { acao: "*", credentials: false, status: 401 }],
    ["none", "null", { acao: undefined, credentials: false, status: 403 }],
  ];
  it.each(simpleCases)("simple request with %s from %s", async (kind, origin, want) => {
    const res = await simple(origin, creds[kind]);
    check(res, want);
    if (want.status === 403) expect(res.body).toEqual({ success: false, error: { code: 403000, message: "Forbidden resource" } });
  });

  // A preflight carries no credentials, so the matrix collapses onto the origin.
  it.each([
    [ALLOWED, { acao: ALLOWED, credentials: true, status: 204 }],
    [OTHER, { acao: "*", credentials: false, status: 204 }],
    ["null", { acao: undefined, credentials: false, status: 403 }],
  ] as Array<[string, Expectation]>)("preflight from %s", async (origin, want) => {
    const res = await preflight(origin);
    check(res, want);
    if (want.status === 204) {
      expect(res.text).toBe("");
      expect(res.headers["access-control-allow-methods"]).toContain("DELETE");
      expect(res.headers["access-control-allow-headers"]).toMatch(/X-Api-Key/i);
      expect(res.headers["access-control-allow-headers"]).toMatch(/Authorization/i);
    }
  });

  it("Origin: null is answered only by GET /api/v1/capabilities, with * and no credentials, before authentication", async () => {
    const ok = await supertest(gw.app).get("/api/v1/capabilities").set("origin", "null").set(creds.jwt);
    expect(ok.headers["access-control-allow-origin"]).toBe("*");
    expect(ok.headers["access-control-allow-credentials"]).toBeUndefined();
    const pre = await supertest(gw.app).options("/api/v1/capabilities").set("origin", "null").set("access-control-request-method", "GET");
    expect(pre.status).toBe(204);
    expect(pre.headers["access-control-allow-origin"]).toBe("*");
    for (const [method, path] of [
      ["post", "/api/v1/auth/sign-in"],
      ["get", "/api/v1/openapi.json"],
      ["get", "/api/v1/event-types"],
      ["get", "/api/v1/nope"],
      ["post", "/api/v1/capabilities"],
    ] as const) {
      const res = await supertest(gw.app)[method](path).set("origin", "null").set({ authorization: "Bearer garbage" });
      expect([path, res.status, res.body.error?.code]).toEqual([path, 403, 403000]);
    }
  });

  it("preflights are answered 204 and do not count against the rate limit", async () => {
    const fresh = { authorization: `Bearer ${(await identity.signIn(await identity.addUser("MEMBER"))).token}` };
    for (let i = 0; i < 10; i++) expect((await preflight(OTHER)).status).toBe(204);
    const res = await simple(ALLOWED, fresh);
    expect(res.status).toBe(200);
    expect(res.headers["x-ratelimit-remaining"]).toBe("4");
  });

  it("exposes the rate-limit and request-id headers to browsers", async () => {
    const res = await simple(ALLOWED, creds.apiKey);
    expect(res.headers["access-control-expose-headers"]).toMatch(/X-RateLimit-Remaining/);
    expect(res.headers["access-control-expose-headers"]).toMatch(/X-Request-Id/);
  });
});
