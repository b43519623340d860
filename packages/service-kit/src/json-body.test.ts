// A service's JSON body reader: what a client can send answers in the catalogue's envelope, never 500000.
import { gzipSync } from "node:zlib";
import express from "express";
import request from "supertest";
import { errorMiddleware } from "@crm/errors";
import { jsonBody } from "./json-body";

const silent = { error: () => undefined, warn: () => undefined, info: () => undefined };

/** supertest would serialise a Buffer with a JSON media type as JSON; send the compressed bytes as they are. */
const asIs = (bytes: unknown) => bytes as string;

// Both ways: JSON_BODY_OFF_THE_STREAM=false sends every body through express.json (docs/performance.md D4).
describe.each([true, false])("jsonBody (JSON_BODY_OFF_THE_STREAM=%s)", (offTheStream) => {
  function app(): express.Express {
    const a = express();
    a.post("/", ...jsonBody(offTheStream), (req, res) => void res.json({ body: req.body ?? null }));
    a.use(errorMiddleware(() => silent));
    return a;
  }

  const json = '{"firstName":"Grace"}';

  it("parses a JSON body, and a gzip-compressed one", async () => {
    const plain = await request(app()).post("/").set("content-type", "application/json").send(json);
    expect([plain.status, plain.body]).toEqual([200, { body: { firstName: "Grace" } }]);
    const gzipped = await request(app()).post("/").set("content-type", "application/json").set("content-encoding", "gzip").serialize(asIs).send(gzipSync(json));
    expect([gzipped.status, gzipped.body]).toEqual([200, { body: { firstName: "Grace" } }]);
  });

  it("answers malformed JSON 400002 and another media type 415000", async () => {
    const malformed = await request(app()).post("/").set("content-type", "application/json").send("{ nope");
    expect([malformed.status, malformed.body.error.code]).toEqual([400, 400002]);
    const text = await request(app()).post("/").set("content-type", "text/plain").send("hello");
    expect([text.status, text.body.error.code]).toEqual([415, 415000]);
  });

  it.each(["gzip", "deflate", "br"])("answers a corrupt %s body 400001, not 500000", async (encoding) => {
    const res = await request(app()).post("/").set("content-type", "application/json").set("content-encoding", encoding).send(json);
    expect([res.status, res.body.error.code]).toEqual([400, 400001]);
    expect(res.body.error.details).toEqual([{ path: "body", message: "Request body could not be read" }]);
  });

  it("answers an unknown content encoding 415000", async () => {
    const res = await request(app()).post("/").set("content-type", "application/json").set("content-encoding", "zstd-nope").send(json);
    expect([res.status, res.body.error.code]).toEqual([415, 415000]);
  });

  it("reads a body declared as charset=utf-8, and one that starts with a byte order mark, as body-parser does", async () => {
    for (const [type, body] of [
      ["application/json; charset=utf-8", json],
      ["application/json", `\ufeff${json}`],
      ["application/vnd.api+json", json],
    ] as const) {
      const res = await request(app()).post("/").set("content-type", type).send(body);
      expect([type, res.status, res.body]).toEqual([type, 200, { body: { firstName: "Grace" } }]);
    }
  });

  it("names a NUL character in a field 400001, plain or compressed", async () => {
    const nul = JSON.stringify({ firstName: "Gr\u0000ace" });
    const plain = await request(app()).post("/").set("content-type", "application/json").send(nul);
    const gzipped = await request(app()).post("/").set("content-type", "application/json").set("content-encoding", "gzip").serialize(asIs).send(gzipSync(nul));
    for (const res of [plain, gzipped]) {
      expect([res.status, res.body.error.code, res.body.error.details]).toEqual([400, 400001, [{ path: "firstName", message: "Must not contain a NUL character" }]]);
    }
  });

  it("names a lone UTF-16 surrogate in a field 400001, as sent raw (issue 35 item 5)", async () => {
    const res = await request(app()).post("/").set("content-type", "application/json").send('{"firstName":"a","lastName":"\\udc00"}');
    expect([res.status, res.body.error.code, res.body.error.details]).toEqual([400, 400001, [{ path: "lastName", message: "Must not contain a lone UTF-16 surrogate" }]]);
  });

  it("answers a body over 1 MiB 413000", async () => {
    const res = await request(app())
      .post("/")
      .set("content-type", "application/json")
      .send(JSON.stringify({ notes: "x".repeat(1024 * 1024) }));
    expect([res.status, res.body.error.code]).toEqual([413, 413000]);
  });
});
