import { Writable } from "node:stream";
import express, { type Express } from "express";
import request from "supertest";
import { createLogger, type Logger } from "@crm/logger";
import { expressServer } from "./express-server";
import { requestContext } from "./request-context";

function capture(level: string): { logger: Logger; lines: Array<Record<string, unknown>>; children: () => number } {
  const lines: Array<Record<string, unknown>> = [];
  const destination = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split("\n").filter(Boolean)) lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  const logger = createLogger({ service: "test", level, destination });
  let made = 0;
  const child = logger.child;
  logger.child = function (this: Logger, ...args: Parameters<Logger["child"]>) {
    made++;
    return child.apply(this, args);
  } as Logger["child"];
  return { logger, lines, children: () => made };
}

function appOf(logger: Logger, lazyLog: boolean): Express {
  const app = express();
  app.get("/before", (req, res) => void res.json({ log: req.log !== undefined }));
  app.use(requestContext(logger, { lazyLog }));
  app.get("/quiet", (_req, res) => void res.json({}));
  app.get("/twice", (req, res) => {
    req.log.warn("first");
    req.log.warn("second");
    res.json({});
  });
  app.get("/replaced", (req, res) => {
    const replacement = req.log.child({ extra: "yes" });
    req.log = replacement;
    req.log.warn("after");
    res.json({ same: req.log === replacement });
  });
  return app;
}

// Express swaps each request's prototype for the app's (supertest's plain server); expressServer's
// requests are born with it. The accessor is installed on whichever prototype the request has.
// Both ways: LEAN_REQUEST_CONTEXT=false builds every request's logger at once (docs/performance.md D12).
describe.each([
  ["a plain server", (app: Express) => app, true],
  ["expressServer", (app: Express) => expressServer(app), true],
  ["a plain server", (app: Express) => app, false],
  ["expressServer", (app: Express) => expressServer(app), false],
])("requestContext's req.log, %s (LEAN_REQUEST_CONTEXT=%s)", (_name, serve, lazyLog) => {
  const appWith = (logger: Logger) => appOf(logger, lazyLog);

  it("builds no child logger for a request that logs nothing (switched off: one per request)", async () => {
    const { logger, lines, children } = capture("warn");
    const server = serve(appWith(logger));
    await request(server).get("/quiet").expect(200);
    await request(server).get("/quiet").expect(200);
    expect(children()).toBe(lazyLog ? 0 : 2);
    expect(lines).toEqual([]);
  });

  it("builds one for a request that logs, with its request id on every line", async () => {
    const { logger, lines, children } = capture("warn");
    await request(serve(appWith(logger)))
      .get("/twice")
      .set("x-request-id", "req-1")
      .expect(200);
    expect(children()).toBe(1);
    expect(lines.map((l) => [l.msg, l.requestId, l.service])).toEqual([
      ["first", "req-1", "test"],
      ["second", "req-1", "test"],
    ]);
  });

  it("gives each request its own", async () => {
    const { logger, lines } = capture("warn");
    const server = serve(appWith(logger));
    await request(server).get("/twice").set("x-request-id", "req-a").expect(200);
    await request(server).get("/twice").set("x-request-id", "req-b").expect(200);
    expect(lines.map((l) => l.requestId)).toEqual(["req-a", "req-a", "req-b", "req-b"]);
  });

  it("keeps the request line at info with the request id", async () => {
    const { logger, lines } = capture("info");
    await request(serve(appWith(logger)))
      .get("/quiet")
      .set("x-request-id", "req-2")
      .expect(200);
    expect(lines).toEqual([expect.objectContaining({ msg: "request", requestId: "req-2", status: 200, path: "/quiet" })]);
  });

  it("can still be replaced", async () => {
    const { logger, lines } = capture("warn");
    const res = await request(serve(appWith(logger)))
      .get("/replaced")
      .set("x-request-id", "req-3")
      .expect(200);
    expect(res.body).toEqual({ same: true });
    expect(lines).toEqual([expect.objectContaining({ msg: "after", requestId: "req-3", extra: "yes" })]);
  });

  it("is absent on a request that never passed requestContext", async () => {
    const { logger } = capture("warn");
    const server = serve(appWith(logger));
    await request(server).get("/quiet").expect(200);
    await request(server).get("/before").expect(200, { log: false });
  });
});
