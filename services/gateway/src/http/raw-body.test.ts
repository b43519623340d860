// The gateway's body reading (body-parser's raw reader): sized, chunked and compressed bodies keep
// their exact bytes and get the same answers.
import express from "express";
import { AsyncLocalStorage } from "node:async_hooks";
import { gzipSync } from "node:zlib";
import request from "supertest";
import { errorMiddleware } from "@crm/errors";
import { BODY_LIMIT_BYTES } from "@crm/service-kit";
import { rawJsonBody } from "./raw-body";

const silent = { error: () => undefined, warn: () => undefined, info: () => undefined };

function app(): express.Express {
  const a = express();
  a.use(rawJsonBody);
  a.post("/", (req, res) => void res.json({ bytes: req.rawBody?.toString("utf8") ?? null, body: req.body ?? null }));
  a.use(errorMiddleware(() => silent));
  return a;
}

/** supertest would serialise a Buffer with a JSON media type as JSON; send the compressed bytes as they are. */
const asIs = (bytes: unknown) => bytes as string;

describe("rawJsonBody", () => {
  const json = '{ "firstName": "Grace",  "lastName": "Hopper" }';

  it("keeps a sized JSON body's exact bytes", async () => {
    const res = await request(app()).post("/").set("content-type", "application/json").send(json);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ bytes: json, body: null });
  });

  it("keeps a chunked body's exact bytes", async () => {
    const req = request(app()).post("/").set("content-type", "application/json").set("transfer-encoding", "chunked");
    req.write(json.slice(0, 10));
    req.write(json.slice(10));
    const res = await req;
    expect(res.status).toBe(200);
    expect(res.body.bytes).toBe(json);
  });

  it("treats a request without a body as having none", async () => {
    const res = await request(app()).post("/");
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ bytes: null, body: null });
  });

  it("refuses malformed JSON with 400002", async () => {
    const res = await request(app()).post("/").set("content-type", "application/json").send("{ nope");
    expect([res.status, res.body.error.code]).toEqual([400, 400002]);
  });

  it("refuses another media type with 415000", async () => {
    const res = await request(app()).post("/").set("content-type", "text/plain").send("hello");
    expect([res.status, res.body.error.code]).toEqual([415, 415000]);
  });

  it("refuses a body over the limit with 413000, sized or chunked", async () => {
    const big = JSON.stringify({ notes: "x".repeat(BODY_LIMIT_BYTES) });
    const sized = await request(app()).post("/").set("content-type", "application/json").send(big);
    expect([sized.status, sized.body.error.code]).toEqual([413, 413000]);
    const req = request(app()).post("/").set("content-type", "application/json").set("transfer-encoding", "chunked");
    req.write(big);
    const chunked = await req;
    expect([chunked.status, chunked.body.error.code]).toEqual([413, 413000]);
  });

  it("inflates a gzip body and keeps the inflated bytes", async () => {
    const res = await request(app()).post("/").set("content-type", "application/json").set("content-encoding", "gzip").serialize(asIs).send(gzipSync(json));
    expect(res.status).toBe(200);
    expect(res.body.bytes).toBe(json);
  });

  it.each(["gzip", "deflate", "br"])("answers a corrupt %s body 400001, not 500000", async (encoding) => {
    const res = await request(app()).post("/").set("content-type", "application/json").set("content-encoding", encoding).send(json);
    expect([res.status, res.body.error.code]).toEqual([400, 400001]);
    expect(res.body.error.details).toEqual([{ path: "body", message: "Request body could not be read" }]);
  });

  it("keeps the request's async context (its trace span) for what follows, sized or chunked", async () => {
    const context = new AsyncLocalStorage<string>();
    const a = express();
    a.use((req, _res, next) => context.run(String(req.headers["x-context"]), next));
    a.use(rawJsonBody);
    a.post("/", (_req, res) => void res.json({ context: context.getStore() ?? null }));
    const sized = await request(a).post("/").set("x-context", "sized").set("content-type", "application/json").send(json);
    expect(sized.body).toEqual({ context: "sized" });
    const chunked = request(a).post("/").set("x-context", "chunked").set("content-type", "application/json").set("transfer-encoding", "chunked");
    chunked.write(json);
    expect((await chunked).body).toEqual({ context: "chunked" });
  });
});
