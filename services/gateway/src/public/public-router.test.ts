import express from "express";
import request from "supertest";
import { API_PREFIX, routesOf } from "@crm/contracts";
import { publicRouter } from "./public-router";

describe("public documents", () => {
  it("builds the OpenAPI document on its first request only, then serves the same bytes and ETag", async () => {
    const openapi = jest.fn(() => ({ openapi: "3.0.3", paths: {} }));
    const app = express().use("/api/v1", publicRouter({ capabilities: { version: "v1" }, openapi }));
    expect(openapi).not.toHaveBeenCalled();

    const capabilities = await request(app).get("/api/v1/capabilities");
    expect(capabilities.status).toBe(200);
    expect(openapi).not.toHaveBeenCalled();

    const first = await request(app).get("/api/v1/openapi.json");
    const second = await request(app).get("/api/v1/openapi.json");
    expect(first.status).toBe(200);
    expect(first.body).toEqual({ openapi: "3.0.3", paths: {} });
    expect(second.text).toBe(first.text);
    expect(second.headers.etag).toBe(first.headers.etag);
    expect(openapi).toHaveBeenCalledTimes(1);

    const cached = await request(app)
      .get("/api/v1/openapi.json")
      .set("If-None-Match", first.headers.etag as string);
    expect(cached.status).toBe(304);
  });

  it("serves the event catalogue without credentials: 28 events with a JSON Schema each, same bytes and ETag every time", async () => {
    const app = express().use("/api/v1", publicRouter({ capabilities: { version: "v1" }, openapi: () => ({}) }));
    const first = await request(app).get("/api/v1/event-types");
    expect(first.status).toBe(200);
    expect(first.headers["content-type"]).toMatch(/^application\/json/);
    expect(first.body.success).toBe(true);
    expect(first.body.data).toHaveLength(28);
    expect(first.body.data[0]).toMatchObject({ name: "client.created", entity: "client", action: "created", schema: { type: "object" } });
    const second = await request(app).get("/api/v1/event-types");
    expect(second.text).toBe(first.text);
    const cached = await request(app)
      .get("/api/v1/event-types")
      .set("If-None-Match", first.headers.etag as string);
    expect(cached.status).toBe(304);
  });

  it("serves every public route declared for the gateway (the docs page and an asset of it included)", async () => {
    // The gateway's one authenticated route, the audit log, has its own router (audit/audit-log.router.ts).
    const publicRoutes = routesOf("gateway").filter((route) => route.public);
    const app = express().use("/api/v1", publicRouter({ capabilities: { version: "v1" }, openapi: () => ({}), docsHtml: "<html></html>" }));
    const statuses = await Promise.all(
      publicRoutes.map(async (route) => {
        const path = `${API_PREFIX}${route.path.replace("{asset}", "init.js")}`;
        return `${route.method} ${path} ${(await request(app)[route.method.toLowerCase() as "get"](path)).status}`;
      }),
    );
    expect(statuses).toEqual(publicRoutes.map((route) => `${route.method} ${API_PREFIX}${route.path.replace("{asset}", "init.js")} 200`));
  });
});
