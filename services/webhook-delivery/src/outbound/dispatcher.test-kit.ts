// Loopback receivers and dispatchers for the outbound tests (dispatcher.test.ts,
// guarded-connector.test.ts), each closed after its test.
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { createDispatcher, type Dispatcher } from "./dispatcher";

export interface ReceivedRequest {
  method: string | undefined;
  url: string | undefined;
  headers: IncomingHttpHeaders;
  body: string;
}

export interface Receiver {
  port: number;
  url: string;
  requests: ReceivedRequest[];
  connections: number;
  close(): Promise<void>;
}

const receivers: Receiver[] = [];
const dispatchers: Dispatcher[] = [];

/** A loopback HTTP receiver on an ephemeral port that records what it gets; closed after each test. */
export async function startReceiver(handle: (req: IncomingMessage, res: ServerResponse, body: string) => void): Promise<Receiver> {
  const requests: ReceivedRequest[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8");
      requests.push({ method: req.method, url: req.url, headers: req.headers, body });
      handle(req, res, body);
    });
  });
  const receiver: Receiver = {
    port: 0,
    url: "",
    requests,
    connections: 0,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  server.on("connection", () => {
    receiver.connections += 1;
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  receiver.port = (server.address() as AddressInfo).port;
  receiver.url = `http://127.0.0.1:${receiver.port}/hooks/crm?source=test`;
  receivers.push(receiver);
  return receiver;
}

export function dispatcher(options: Partial<Parameters<typeof createDispatcher>[0]> = {}): Dispatcher {
  const created = createDispatcher({ timeoutMs: 2000, allowPrivateTargets: true, ...options });
  dispatchers.push(created);
  return created;
}

export const simpleDelivery = (url: string) => ({ url, headers: { "Content-Type": "application/json" }, body: "{}" });

afterEach(async () => {
  await Promise.all(dispatchers.splice(0).map((d) => d.close()));
  await Promise.all(receivers.splice(0).map((r) => r.close()));
});
