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
