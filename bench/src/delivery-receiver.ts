// The webhook receiver of the delivery benchmark, on loopback: `/ok` answers 200 (after an optional
// delay), `/hang` accepts the request and never answers. Every request is recorded with its arrival
// time, delivery id and the record id and business it is about.
import http from "node:http";
import type { AddressInfo, Socket } from "node:net";

export interface Arrival {
  at: number;
  deliveryId: string;
  businessId: string;
  /** `data.id` of the event: the record the create made. */
  recordId: string;
}

export interface BenchReceiver {
  okUrl: string;
  hangUrl: string;
  arrivals: Arrival[];
  /** Arrivals of one business (kept per business so waiting loops stay cheap). */
  of(businessId: string): Arrival[];
  close(): Promise<void>;
}

export async function startBenchReceiver(options: { delayMs: number }): Promise<BenchReceiver> {
  const arrivals: Arrival[] = [];
  const perBusiness = new Map<string, Arrival[]>();
  const sockets = new Set<Socket>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const at = performance.now();
      if (req.url?.startsWith("/hang")) return; // accepted, never answered
      let body: { businessId?: string; data?: { id?: string } } = {};
      try {
        body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
      } catch {
        /* the peer's bodies are JSON too; anything else is simply not attributed */
      }
      const arrival: Arrival = {
        at,
        deliveryId: String(req.headers["x-service-delivery-id"] ?? ""),
        businessId: body.businessId ?? "",
        recordId: body.data?.id ?? "",
      };
      arrivals.push(arrival);
      const list = perBusiness.get(arrival.businessId) ?? [];
      list.push(arrival);
      perBusiness.set(arrival.businessId, list);
      const answer = () => res.writeHead(200, { "content-type": "text/plain" }).end("ok");
      if (options.delayMs > 0) setTimeout(answer, options.delayMs);
      else answer();
    });
  });
  server.keepAliveTimeout = 60_000;
  server.on("connection", (s) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    okUrl: `http://127.0.0.1:${port}/ok`,
    hangUrl: `http://127.0.0.1:${port}/hang`,
    arrivals,
    of: (businessId) => perBusiness.get(businessId) ?? [],
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
