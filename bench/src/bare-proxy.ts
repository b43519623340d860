// The floor of any gateway hop (issue 9): a reverse proxy that does nothing but forward. node:http
// in, one undici pool out (the gateway's client library), the request's headers and body passed on,
// the answer's status, headers and body passed back; no auth, no Redis, no rate limit, no logging.
// Run as its own process (`tsx bare-proxy.ts <upstream origin>`), so its CPU is its own; prints its
// address on the first line of stdout.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { Pool } from "undici";

/** Hop-by-hop headers (RFC 9110 §7.6.1) are the connection's, not the message's. */
const HOP_BY_HOP = new Set(["connection", "keep-alive", "transfer-encoding", "upgrade", "proxy-connection", "te", "trailer", "host"]);

function endToEnd(headers: Record<string, string | string[] | undefined>): Record<string, string | string[]> {
  const kept: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(headers)) if (value !== undefined && !HOP_BY_HOP.has(name)) kept[name] = value;
  return kept;
}

export function startBareProxy(upstream: string): Promise<http.Server> {
  const pool = new Pool(upstream, { connections: 32 });
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const body = chunks.length > 0 ? Buffer.concat(chunks) : undefined;
      pool.request({ path: req.url ?? "/", method: req.method as "GET", headers: endToEnd(req.headers), body }).then(
        async (answer) => {
          const bytes = Buffer.from(await answer.body.arrayBuffer());
          res.writeHead(answer.statusCode, { ...endToEnd(answer.headers), "content-length": String(bytes.length) });
          res.end(bytes);
        },
        (err: Error) => {
          res.writeHead(502, { "content-type": "text/plain" });
          res.end(err.message);
        },
      );
    });
  });
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(server)));
}

if (require.main === module) {
  void startBareProxy(process.argv[2]!).then((server) => {
    process.stdout.write(`http://127.0.0.1:${(server.address() as AddressInfo).port}\n`);
  });
}
