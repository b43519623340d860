import express from "express";
import { listen } from "./lifecycle";

describe("listen().close()", () => {
  it("stops accepting, lets the in-flight request finish, then resolves", async () => {
    const app = express();
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    app.get("/slow", async (_req, res) => {
      await released;
      res.json({ finished: true });
    });
    const server = await listen(app, 0, "127.0.0.1");
    const inFlight = fetch(`${server.url}/slow`).then(async (r) => ({ status: r.status, body: await r.json() }));
    await new Promise((r) => setTimeout(r, 50));
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
