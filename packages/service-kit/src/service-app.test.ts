import express from "express";
import request from "supertest";
import { createLogger } from "@crm/logger";
import type { Principal } from "@crm/contracts";
import { createServiceApp } from "./service-app";
import { signInternalToken } from "./internal-token";
import { principalOf, requirePermission } from "./auth";

const secret = "s".repeat(40);
const principal: Principal = { businessId: "b1", authType: "jwt", userId: "u1", apiKeyId: null, sessionId: "s1", jti: "j1", permissions: ["clients.read"] };

function app(ready = true) {
  const api = express.Router();
  api.get("/thing", requirePermission("clients.read"), (req, res) => void res.json({ business: principalOf(req).businessId }));
  api.post("/thing", requirePermission("clients.create"), (_req, res) => void res.json({}));
  api.post("/echo", requirePermission("clients.read"), (req, res) => void res.json(req.body));
  api.get("/tagged", (req, res) => {
    // As crm-records answers one record (extensions §E2.3): its own strong ETag and its own 304.
    res.setHeader("ETag", '"v1"');
    if (req.get("if-none-match") === '"v1"') return void res.status(304).end();
    res.json({ id: "r1" });
  });
  api.get("/boom", () => {
    throw new Error("secret internals");
  });
  const publicApi = express.Router();
  publicApi.post("/open", (req, res) => void res.status(201).json({ got: req.body, principal: req.principal ?? null }));
  return createServiceApp({
    logger: createLogger({ service: "test", level: "silent" }),
    internalTokenSecret: secret,
    readiness: [{ name: "db", check: async () => (ready ? undefined : Promise.reject(new Error("down"))) }],
    api,
    publicApi,
  });
}

const token = signInternalToken({ principal }, secret);

describe("createServiceApp", () => {
  it("answers health and readiness", async () => {
    await request(app()).get("/healthz").expect(200, { status: "ok" });
    await request(app()).get("/readyz").expect(200);
    const res = await request(app(false)).get("/readyz").expect(503);
    expect(res.body.checks.db).toBe("unavailable");
  });

  it("refuses requests without a valid internal token", async () => {
    const res = await request(app()).get("/api/v1/thing").expect(401);
    expect(res.body).toEqual({ success: false, error: { code: 401000, message: "Authentication required" } });
    await request(app())
      .get("/api/v1/thing")
      .set("x-internal-token", signInternalToken({ principal }, "x".repeat(40)))
      .expect(401);
    await request(app()).get("/api/v1/thing").set("x-internal-token", signInternalToken({}, secret)).expect(401);
  });

  it("serves public routes with a caller-less internal token, never without one", async () => {
    await request(app()).post("/api/v1/open").send({ a: 1 }).expect(401);
    const res = await request(app()).post("/api/v1/open").set("x-internal-token", signInternalToken({}, secret)).send({ a: 1 }).expect(201);
    expect(res.body).toEqual({ got: { a: 1 }, principal: null });
  });

  it("checks permissions and scopes by the token's business", async () => {
    await request(app()).get("/api/v1/thing").set("x-internal-token", token).expect(200, { business: "b1" });
    const res = await request(app()).post("/api/v1/thing").set("x-internal-token", token).expect(401);
    expect(res.body.error.code).toBe(401014);
  });

  it("maps body problems to the catalogue", async () => {
    const malformed = await request(app()).post("/api/v1/echo").set("x-internal-token", token).set("content-type", "application/json").send("{bad");
    expect([malformed.status, malformed.body.error.code]).toEqual([400, 400002]);
    const big = await request(app())
      .post("/api/v1/echo")
      .set("x-internal-token", token)
      .set("content-type", "application/json")
      .send(JSON.stringify({ a: "x".repeat(1024 * 1024) }));
    expect([big.status, big.body.error.code]).toEqual([413, 413000]);
    const text = await request(app()).post("/api/v1/echo").set("x-internal-token", token).set("content-type", "text/plain").send("hello");
    expect([text.status, text.body.error.code]).toEqual([415, 415000]);
  });

  it("refuses a NUL character anywhere in a JSON body with 400001 naming the field, before any handler", async () => {
    const echo = (body: string) => request(app()).post("/api/v1/echo").set("x-internal-token", token).set("content-type", "application/json").send(body);
    const nul = await echo('{"firstName":"a\\u0000b","items":[{"description":"ok"},{"description":"x\\u0000"}]}');
    expect([nul.status, nul.body]).toEqual([
      400,
      {
        success: false,
        error: {
          code: 400001,
          message: "Validation failed",
          details: [
            { path: "firstName", message: "Must not contain a NUL character" },
            { path: "items.1.description", message: "Must not contain a NUL character" },
          ],
        },
      },
    ]);
    const clean = await echo('{"firstName":"a\\u0001b"}');
    expect([clean.status, clean.body]).toEqual([200, { firstName: "a\u0001b" }]);
  });

  it("answers unknown routes and unexpected failures with the envelope and nothing internal", async () => {
    const missing = await request(app()).get("/nope").expect(404);
    expect(missing.body).toEqual({ success: false, error: { code: 404000, message: "Route not found" } });
    const boom = await request(app()).get("/api/v1/boom").set("x-internal-token", token).expect(500);
    expect(boom.body).toEqual({ success: false, error: { code: 500000, message: "Internal server error" } });
  });

  it("adds no weak ETag of its own to any answer; a route's strong ETag and its 304 stay (issue 35 item 6)", async () => {
    const listed = await request(app()).get("/api/v1/thing").set("x-internal-token", token).expect(200);
    expect(listed.headers.etag).toBeUndefined();
    const echoed = await request(app()).post("/api/v1/echo").set("x-internal-token", token).send({ a: 1 }).expect(200);
    expect(echoed.headers.etag).toBeUndefined();
    expect((await request(app()).get("/healthz")).headers.etag).toBeUndefined();
    const tagged = await request(app()).get("/api/v1/tagged").set("x-internal-token", token).expect(200);
    expect(tagged.headers.etag).toBe('"v1"');
    await request(app()).get("/api/v1/tagged").set("x-internal-token", token).set("if-none-match", '"v1"').expect(304);
  });

  it("echoes a sane X-Request-Id and generates one otherwise", async () => {
    const echoed = await request(app()).get("/healthz").set("X-Request-Id", "abc-123");
    expect(echoed.headers["x-request-id"]).toBe("abc-123");
    const generated = await request(app()).get("/healthz").set("X-Request-Id", "bad id with spaces");
    expect(generated.headers["x-request-id"]).toMatch(/^[0-9a-f-]{36}$/);
  });
});
