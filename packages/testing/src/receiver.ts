// A webhook receiver on loopback for tests and the e2e suite: records every request with exactly the
// bytes received and answers as told; the answer can change at any time, per request too.
import http from "node:http";
import type { AddressInfo, Socket } from "node:net";

export interface ReceivedRequest {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  /** Exactly the bytes received. */
  rawBody: string;
  at: number;
}

export type Behaviour = { kind: "status"; status: number; body?: string } | { kind: "hang" } | { kind: "close" } | { kind: "redirect"; location: string };

/** A receiver that records every request and answers as `behaviour` says. */
export interface Receiver {
  url: string;
  requests: ReceivedRequest[];
  behaviour: Behaviour | ((req: ReceivedRequest) => Behaviour);
  close(): Promise<void>;
}

export async function startReceiver(behaviour: Receiver["behaviour"] = { kind: "status", status: 200, body: "ok" }, path = "/hook"): Promise<Receiver> {
  const sockets = new Set<Socket>();
  const receiver: Receiver = { url: "", requests: [], behaviour, close: async () => undefined };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const received: ReceivedRequest = {
        method: req.method ?? "",
        path: req.url ?? "",
        headers: req.headers,
        rawBody: Buffer.concat(chunks).toString("utf8"),
        at: Date.now(),
      };
      receiver.requests.push(received);
      const b = typeof receiver.behaviour === "function" ? receiver.behaviour(received) : receiver.behaviour;
      if (b.kind === "status") res.writeHead(b.status, { "content-type": "text/plain" }).end(b.body ?? "");
      else if (b.kind === "close") req.socket.destroy();
      else if (b.kind === "redirect") res.writeHead(302, { location: b.location }).end();
      // "hang": never answer; the socket is destroyed on close().
    });
  });
  server.on("connection", (s) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}${path}`;
  receiver.close = () =>
    new Promise<void>((resolve) => {
      for (const s of sockets) s.destroy();
      server.close(() => resolve());
    });
  return receiver;
}
