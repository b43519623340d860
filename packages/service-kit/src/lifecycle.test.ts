import http from "node:http";
import type { Socket } from "node:net";
import express from "express";
import { listen, startService } from "./lifecycle";

describe("listen().close()", () => {
  it("stops accepting, lets the in-flight request finish, then resolves", async () => {
    const app = express();
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    let arrive!: () => void;
    const arrived = new Promise<void>((r) => (arrive = r));
    app.get("/slow", async (_req, res) => {
      arrive();
      await released;
      res.json({ finished: true });
    });
    const server = await listen(app, 0, "127.0.0.1");
    const inFlight = fetch(`${server.url}/slow`).then(async (r) => ({ status: r.status, body: await r.json() }));
    // In flight once the server has it: a fixed 50 ms was not always enough for the first fetch to
    // connect on a loaded CI machine (the close then came first and the fetch was reset).
    await arrived;
    let closed = false;
    const closing = server.close(5000).then(() => (closed = true));
    await new Promise((r) => setTimeout(r, 50));
    expect(closed).toBe(false);
    await expect(fetch(`${server.url}/slow`, { signal: AbortSignal.timeout(1000) })).rejects.toThrow();
    release();
    expect(await inFlight).toEqual({ status: 200, body: { finished: true } });
    await closing;
    expect(closed).toBe(true);
  });
});

describe("startService()", () => {
  const logger = { info: jest.fn(), error: jest.fn() } as unknown as Parameters<typeof startService>[1];

  it("undoes what started, in reverse, once, on stop()", async () => {
    const undone: string[] = [];
    const service = await startService("demo", logger, async (undo) => {
      const db = undo.add({ name: "db" }, (part) => undone.push(part.name));
      undo.push(() => undone.push("job"));
      undo.add({ name: "server" }, (part) => undone.push(part.name));
      return { url: `http://${db.name}`, port: 1, extra: 42 };
    });
    expect(service).toMatchObject({ name: "demo", url: "http://db", port: 1, extra: 42 });
    await Promise.all([service.stop(), service.stop()]);
    expect(undone).toEqual(["server", "job", "db"]);
  });

  it("undoes what started when a later step throws, also past a failing undo step", async () => {
    const undone: string[] = [];
    const started = startService("demo", logger, async (undo) => {
      undo.push(() => undone.push("db"));
      undo.push(() => {
        throw new Error("close failed");
      });
      undo.push(() => undone.push("bus"));
      throw new Error("listen failed");
    });
    await expect(started).rejects.toThrow("listen failed");
    expect(undone).toEqual(["bus", "db"]);
  });

  it("hands over its listener's app for callers in the same process, closed once it stops", async () => {
    const app = express();
    const service = await startService("demo", logger, async (undo) => {
      const server = undo.add(await listen(app, 0, "127.0.0.1"), (s) => s.close(100));
      return { url: server.url, port: server.port };
    });
    const handler = service.inProcess!;
    expect(handler.handle).toBe(app);
    expect(handler.host).toBe(`127.0.0.1:${service.port}`);
    // Built as the listener builds them: with the app's prototypes.
    expect(handler.IncomingMessage.prototype).toBe(app.request);
    expect(handler.ServerResponse.prototype).toBe(app.response);
    expect(handler.open).toBe(true);
    await service.stop();
    expect(handler.open).toBe(false);
  });

  it("has no in-process handler when nothing of this process listens at its URL", async () => {
    const service = await startService("demo", logger, async () => ({ url: "http://127.0.0.1:1", port: 1 }));
    expect(service.inProcess).toBeUndefined();
    await service.stop();
  });
});

describe("draining", () => {
  const logger = { info: jest.fn(), error: jest.fn() } as unknown as Parameters<typeof startService>[1];

  /** One GET on a kept-alive socket: its answer, and the socket (to watch it close). */
  function get(url: string, agent: http.Agent): Promise<{ status: number; connection: string | undefined; body: string; socket: Socket }> {
    return new Promise((resolve, reject) => {
      const req = http.get(url, { agent }, (res) => {
        let body = "";
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => void (body += chunk));
        res.on("end", () => resolve({ status: res.statusCode!, connection: res.headers.connection, body, socket: req.socket! }));
      });
      req.on("error", reject);
    });
  }

  it("answers /readyz 503 at once, still serves, and ends each kept-alive connection with its next answer", async () => {
    const app = express();
    app.get("/readyz", (_req, res) => void res.json({ status: "ready" }));
    app.get("/work", (_req, res) => void res.json({ done: true }));
    const server = await listen(app, 0, "127.0.0.1");
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const before = await get(`${server.url}/work`, agent);
      expect(before).toMatchObject({ status: 200, connection: "keep-alive" });
      server.drain();
      // The idle connection stays until it is used: its next answer closes it.
      const during = await get(`${server.url}/work`, agent);
      expect(during.socket).toBe(before.socket);
      expect(during).toMatchObject({ status: 200, connection: "close", body: JSON.stringify({ done: true }) });
      await new Promise<void>((resolve) => (before.socket.destroyed ? resolve() : before.socket.once("close", () => resolve())));

      const readiness = await get(`${server.url}/readyz`, agent);
      expect(readiness).toMatchObject({ status: 503, connection: "close", body: JSON.stringify({ status: "not ready", draining: true }) });
      expect(readiness.socket).not.toBe(before.socket);
      server.drain(); // a second drain changes nothing
      expect(await get(`${server.url}/work`, agent)).toMatchObject({ status: 200, connection: "close" });
    } finally {
      agent.destroy();
      await server.close(100);
    }
  });

  it("drain() drains the service's listeners for drainMs, once, and stop() closes them after", async () => {
    const app = express();
    app.get("/readyz", (_req, res) => void res.json({ status: "ready" }));
    const undone: string[] = [];
    const service = await startService("demo", logger, async (undo) => {
      undo.push(() => undone.push("job"));
      const server = undo.listening(await listen(app, 0, "127.0.0.1"), 150);
      return { url: server.url, port: server.port };
    });
    const startedAt = Date.now();
    const draining = service.drain();
    expect(service.drain()).toBe(draining);
    expect((await fetch(`${service.url}/readyz`)).status).toBe(503);
    await draining;
    expect(Date.now() - startedAt).toBeGreaterThanOrEqual(140);
    expect(undone).toEqual([]);
    await service.stop();
    expect(undone).toEqual(["job"]);
    await expect(fetch(`${service.url}/readyz`, { signal: AbortSignal.timeout(1000) })).rejects.toThrow();
  });
});
