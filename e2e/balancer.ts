// A small HTTP load balancer for the rolling-restart test, doing what the balancer in front of the
// gateways does in production: round-robin over the gateways whose /readyz answers 200 (probed every
// PROBE_MS), and a request whose connection is refused (nothing sent), or reset before any answer byte
// when it is safe to repeat (GET, HEAD, an Idempotency-Key), goes once to the next gateway (nginx's
// proxy_next_upstream, HAProxy's `retry-on conn-failure`). It counts what it did, for the report.
import http from "node:http";
import type { AddressInfo } from "node:net";

const PROBE_MS = 100;

export interface Balancer {
  url: string;
  /** Requests sent again to another gateway, by why. */
  retried: { refused: number; reset: number };
  /** Requests answered 502 (no gateway answered), with the errors met, for the test's report. */
  failures: Array<{ at: number; method: string; url: string; errors: string[] }>;
  close(): Promise<void>;
}

export async function startBalancer(targets: readonly string[]): Promise<Balancer> {
  const ready = new Map(targets.map((t) => [t, true]));
  const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
  const retried = { refused: 0, reset: 0 };
  const failures: Balancer["failures"] = [];
  let turn = 0;
  let probing = true;
  const probes = (async () => {
    while (probing) {
      await Promise.all(
        targets.map(async (target) => {
          const res = await fetch(`${target}/readyz`, { signal: AbortSignal.timeout(PROBE_MS * 5) }).catch(() => undefined);
          ready.set(target, res?.status === 200);
        }),
      );
      await new Promise((resolve) => setTimeout(resolve, PROBE_MS));
    }
  })();
  const order = (): string[] => {
    const live = targets.filter((t) => ready.get(t));
    const pool = live.length > 0 ? live : [...targets];
    turn = (turn + 1) % pool.length;
    return [...pool.slice(turn), ...pool.slice(0, turn)];
  };

  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    const repeatable = req.method === "GET" || req.method === "HEAD" || req.headers["idempotency-key"] !== undefined;
    const [first, second] = order();
    const send = (target: string) =>
      new Promise<http.IncomingMessage>((resolve, reject) => {
        const { connection: _connection, "keep-alive": _keepAlive, ...headers } = req.headers;
        const upstream = http.request(`${target}${req.url}`, { method: req.method, headers, agent }, resolve);
        upstream.once("error", reject);
        upstream.end(body);
      });
    const fail = (errors: unknown[]) => {
      failures.push({ at: Date.now(), method: req.method!, url: req.url!, errors: errors.map((e) => `${(e as { code?: string }).code ?? ""} ${String(e)}`) });
      res.writeHead(502).end();
    };
    let answer: http.IncomingMessage;
    try {
      answer = await send(first!);
    } catch (err) {
      const code = (err as { code?: string }).code;
      const again = second !== undefined && second !== first && (code === "ECONNREFUSED" || (repeatable && (code === "ECONNRESET" || code === "EPIPE")));
      if (!again) return fail([err]);
      if (code === "ECONNREFUSED") retried.refused++;
      else retried.reset++;
      try {
        answer = await send(second);
      } catch (again) {
        return fail([err, again]);
      }
    }
    const { connection: _connection, "keep-alive": _keepAlive, ...headers } = answer.headers;
    res.writeHead(answer.statusCode!, headers);
    answer.pipe(res);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    retried,
    failures,
    close: async () => {
      probing = false;
      await probes;
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      agent.destroy();
    },
  };
}
