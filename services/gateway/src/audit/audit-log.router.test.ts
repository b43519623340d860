// The gateway's merge of the three services' audit pages (extensions §E7), with the services faked:
// what each is asked, how their answers combine, and what the caller gets when one cannot answer.
import express from "express";
import request from "supertest";
import { AuditCursorCodec } from "@crm/audit";
import type { AuditEntryView, Principal } from "@crm/contracts";
import { errorMiddleware } from "@crm/errors";
import { createLogger } from "@crm/logger";
import type { UpstreamResponse } from "../http/forwarder";
import { auditLogRouter } from "./audit-log.router";

const SECRET = "audit-router-test-secret-0123456789abcdef";
const BUSINESS = "0193a4b2-7c5d-7e8f-9a0b-1c2d3e4f5a6b";
const principal: Principal = { businessId: BUSINESS, authType: "jwt", userId: "u", apiKeyId: null, sessionId: "s", jti: "j", permissions: ["users.update"] };
const logger = createLogger({ service: "gateway-test", level: "silent" });

const entry = (id: string, occurredAt: string) => ({ id, occurredAt, action: "client.created" }) as AuditEntryView;

function appWith(answers: Record<string, (path: string) => UpstreamResponse>) {
  const asked: Array<{ service: string; path: string }> = [];
  const forwarder = {
    ask: async (service: string, path: string) => {
      asked.push({ service, path });
      return answers[service]!(path);
    },
  };
  const app = express()
    .use((_req, res, next) => {
      res.locals.principal = principal;
      next();
    })
    .use("/api/v1", auditLogRouter(forwarder as never, SECRET))
    .use(errorMiddleware(() => logger));
  return { app, asked };
}

const ok = (data: AuditEntryView[]): UpstreamResponse => ({ status: 200, headers: {}, body: Buffer.from(JSON.stringify({ data })) });

describe("GET /api/v1/audit-log at the gateway", () => {
  it("asks each service for perPage + 1 after the same position with the same filters, and answers the newest perPage of the merge", async () => {
    const { app, asked } = appWith({
      "crm-records": () => ok([entry("c", "2026-01-03T00:00:00.000Z"), entry("a", "2026-01-01T00:00:00.000Z")]),
      identity: () => ok([entry("d", "2026-01-03T00:00:00.000Z")]),
      "webhook-delivery": () => ok([entry("b", "2026-01-02T00:00:00.000Z")]),
    });
    const first = await request(app).get("/api/v1/audit-log?perPage=2&action=client.*");
    expect(first.status).toBe(200);
    expect(first.body.data.map((e: AuditEntryView) => e.id)).toEqual(["d", "c"]);
    expect(first.body.meta.perPage).toBe(2);
    expect(asked.map((a) => a.service).sort()).toEqual(["crm-records", "identity", "webhook-delivery"]);
    expect(new Set(asked.map((a) => a.path))).toEqual(new Set(["/internal/audit-log?action=client.*&limit=3"]));
    const cursor = first.body.meta.nextCursor as string;
    expect(new AuditCursorCodec(SECRET).decode(BUSINESS, "log", cursor)).toEqual({ filters: { action: "client.*" }, after: { occurredAt: "2026-01-03T00:00:00.000Z", id: "c" } });

    asked.length = 0;
    await request(app).get(`/api/v1/audit-log?perPage=2&cursor=${cursor}`);
    expect(asked[0]!.path).toBe("/internal/audit-log?action=client.*&afterOccurredAt=2026-01-03T00%3A00%3A00.000Z&afterId=c&limit=3");
  });

  it("the last page has no cursor", async () => {
    const { app } = appWith({ "crm-records": () => ok([entry("a", "2026-01-01T00:00:00.000Z")]), identity: () => ok([]), "webhook-delivery": () => ok([]) });
    expect((await request(app).get("/api/v1/audit-log")).body).toEqual({ success: true, data: [entry("a", "2026-01-01T00:00:00.000Z")], meta: { perPage: 10, nextCursor: null } });
  });

  it("is 503000 when a service cannot answer, and never asks anyone about a malformed query", async () => {
    const { app, asked } = appWith({ "crm-records": () => ok([]), identity: () => ({ status: 500, headers: {}, body: Buffer.from("{}") }), "webhook-delivery": () => ok([]) });
    const res = await request(app).get("/api/v1/audit-log");
    expect([res.status, res.body.error.code]).toEqual([503, 503000]);
    asked.length = 0;
    expect((await request(app).get("/api/v1/audit-log?cursor=forged")).body.error.code).toBe(400019);
    expect((await request(app).get("/api/v1/audit-log?since=soon")).body.error.code).toBe(400001);
    expect((await request(app).get("/api/v1/audit-log?offset=3")).body.error.code).toBe(400001);
    expect(asked).toEqual([]);
  });
});
