import http from "node:http";
import type { AddressInfo } from "node:net";
import express from "express";
import { expressServer } from "./express-server";

async function serve(
  app: express.Express,
  onArrival?: (req: http.IncomingMessage, res: http.ServerResponse) => void,
  prototypesAtBirth = true,
): Promise<{ url: string; close(): Promise<void> }> {
  const server = expressServer(app, { prototypesAtBirth });
  if (onArrival) server.prependListener("request", onArrival);
  server.listen(0, "127.0.0.1");
  await new Promise((resolve) => server.once("listening", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

describe("expressServer()", () => {
  it("builds requests and responses with the app's prototypes, so Express's swap changes nothing", async () => {
    const app = express();
    app.set("trust proxy", "loopback");
    const seen: boolean[] = [];
    const sameAsApp = (req: object, res: object) => seen.push(Object.getPrototypeOf(req) === app.request, Object.getPrototypeOf(res) === app.response);
    app.get("/items/:id", (req, res) => {
      sameAsApp(req, res);
      res
        .status(201)
        .set("X-Item", req.params["id"])
        .json({ id: req.params["id"], query: req.query, ip: req.ip, path: req.path, host: req.hostname, app: req.app === app });
    });
    const server = await serve(app, sameAsApp);
    try {
      const res = await fetch(`${server.url}/items/42?page=2`, { headers: { "X-Forwarded-For": "203.0.113.9" } });
      expect(res.status).toBe(201);
      expect(res.headers.get("x-item")).toBe("42");
      expect(res.headers.get("content-type")).toBe("application/json; charset=utf-8");
      expect(await res.json()).toEqual({ id: "42", query: { page: "2" }, ip: "203.0.113.9", path: "/items/42", host: "127.0.0.1", app: true });
      expect(seen).toEqual([true, true, true, true]); // on arrival, before Express, and in the handler
    } finally {
      await server.close();
    }
  });

  it("answers as Express does without it: weak ETags, 304s, 404s and the error handler", async () => {
    const app = express();
    app.get("/page", (_req, res) => {
      res.send("a page");
    });
    app.get("/fails", () => {
      throw new Error("boom");
    });
    app.use((err: Error, _req: express.Request, res: express.Response, _next: express.NextFunction) => {
      res.status(500).json({ error: err.message });
    });
    const server = await serve(app);
    try {
      const page = await fetch(`${server.url}/page`);
      const etag = page.headers.get("etag");
      expect(etag).toMatch(/^W\/"/);
      expect(await page.text()).toBe("a page");
      // fetch() adds Cache-Control: no-cache to a conditional request, which Express rightly answers in full.
      const conditional = await new Promise<number | undefined>((resolve, reject) =>
        http.get(`${server.url}/page`, { headers: { "If-None-Match": etag! } }, (res) => resolve(res.resume().statusCode)).on("error", reject),
      );
      expect(conditional).toBe(304);
      expect((await fetch(`${server.url}/nowhere`)).status).toBe(404);
      const failed = await fetch(`${server.url}/fails`);
      expect(failed.status).toBe(500);
      expect(await failed.json()).toEqual({ error: "boom" });
    } finally {
      await server.close();
    }
  });

  it("keeps the nearest definition when the app's prototypes override Express's", async () => {
    const app = express();
    Object.defineProperty(app.request, "marker", { value: "app's own", configurable: true });
    app.response.json = function json(this: express.Response, body: unknown) {
      return this.type("json").send(JSON.stringify({ wrapped: body }));
    };
    app.get("/", (req, res) => {
      res.json((req as unknown as { marker: string }).marker);
    });
    const server = await serve(app);
    try {
      expect(await (await fetch(server.url)).json()).toEqual({ wrapped: "app's own" });
    } finally {
      await server.close();
    }
  });

  it("off (prototypesAtBirth: false): Node's classes, Express swaps the prototypes, the answers are the same", async () => {
    const app = express();
    app.set("trust proxy", "loopback");
    const seen: boolean[] = [];
    const sameAsApp = (req: object, res: object) => seen.push(Object.getPrototypeOf(req) === app.request, Object.getPrototypeOf(res) === app.response);
    app.get("/items/:id", (req, res) => {
      sameAsApp(req, res);
      res.status(201).json({ id: req.params["id"], query: req.query, ip: req.ip, path: req.path });
    });
    const server = await serve(app, sameAsApp, false);
    try {
      const res = await fetch(`${server.url}/items/42?page=2`, { headers: { "X-Forwarded-For": "203.0.113.9" } });
      expect(res.status).toBe(201);
      expect(res.headers.get("content-type")).toBe("application/json; charset=utf-8");
      expect(await res.json()).toEqual({ id: "42", query: { page: "2" }, ip: "203.0.113.9", path: "/items/42" });
      expect(seen).toEqual([false, false, true, true]); // Node's on arrival, Express's in the handler
    } finally {
      await server.close();
    }
  });
});
