// Several replicas per service (issue 38, item 1): round-robin, one retry on another replica for a
// refused connection (any request) or one reset before any answer byte (only GET, HEAD and requests
// with an Idempotency-Key), through the forwarder over real sockets.
import http from "node:http";
import type { AddressInfo } from "node:net";
import type { Request } from "express";
import { isAppError } from "@crm/errors";
import { loadConfig } from "../config";
import { Forwarder } from "./forwarder";
import { matchRoute } from "./route-table";
import { connectionFailure, mayHaveRun, REFUSED_REST_MS, safeToRepeat, UpstreamPool } from "./upstream-pool";

const SECRET = "upstream-pool-test-secret-0123456789abcdef";

/** A replica that answers with its name, or (`reset`) cuts every connection before answering; it counts what it was sent. */
async function replica(name: string, mode: "answer" | "reset" = "answer"): Promise<{ url: string; hits: string[]; close(): Promise<void> }> {
  const hits: string[] = [];
  const server = http.createServer((req, res) => {
    hits.push(`${req.method} ${req.url}`);
    if (mode === "reset") return void req.socket.destroy();
    req.resume();
    req.on("end", () => void res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ name })));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    hits,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** A loopback address nothing listens on (a replica that stopped). */
async function stoppedReplica(): Promise<string> {
  const gone = await replica("gone");
  await gone.close();
  return gone.url;
}

/** A request to /api/v1/client, matched as the gateway matches it (its route says whether its service claims the key). */
function request(method: string, headers: Record<string, string> = {}): Request {
  return {
    method,
    originalUrl: "/api/v1/client",
    res: { locals: { route: matchRoute(method, "/api/v1/client") } },
    requestId: "req-1",
    ip: "127.0.0.1",
    protocol: "http",
    headers,
    rawBody: method === "POST" ? Buffer.from("{}") : undefined,
  } as unknown as Request;
}

function forwarderTo(urls: string): Forwarder {
  const config = loadConfig({ CRM_RECORDS_URL: urls, IDENTITY_URL: urls, WEBHOOK_DELIVERY_URL: urls });
  return new Forwarder({
    services: { identity: config.IDENTITY_URL, "crm-records": config.CRM_RECORDS_URL, "webhook-delivery": config.WEBHOOK_DELIVERY_URL },
    internalTokenSecret: SECRET,
    timeoutMs: 5_000,
    maxResponseBytes: 1 << 20,
  });
}

async function answeredBy(forwarder: Forwarder, req: Request): Promise<string> {
  const answer = await forwarder.forward("crm-records", req, undefined);
  return req.method === "HEAD" ? `${answer.status}` : (JSON.parse(answer.body.toString()) as { name: string }).name;
}

describe("upstream replicas through the forwarder", () => {
  it("takes a comma list per service and sends to each replica in turn", async () => {
    const [a, b] = await Promise.all([replica("a"), replica("b")]);
    const forwarder = forwarderTo(` ${a.url}, ${b.url} `);
    try {
      const names: string[] = [];
      for (let i = 0; i < 6; i++) names.push(await answeredBy(forwarder, request("GET")));
      expect(names.sort()).toEqual(["a", "a", "a", "b", "b", "b"]);
      await forwarder.checkHealth("identity");
    } finally {
      await forwarder.close();
      await Promise.all([a.close(), b.close()]);
    }
  });

  it("sends a refused request once more to another replica, whatever its method, and rests the refusing one", async () => {
    const live = await replica("live");
    const forwarder = forwarderTo(`${await stoppedReplica()},${live.url}`);
    try {
      for (const req of [request("GET"), request("POST"), request("DELETE"), request("PATCH")]) expect(await answeredBy(forwarder, req)).toBe("live");
      expect(live.hits).toEqual(["GET /api/v1/client", "POST /api/v1/client", "DELETE /api/v1/client", "PATCH /api/v1/client"]);
      // Readiness: the service is there while one replica is.
      await forwarder.checkHealth("crm-records");
    } finally {
      await forwarder.close();
      await live.close();
    }
  });

  it("sends a request reset before any answer byte once more only when repeating it is safe", async () => {
    const [resetting, live] = await Promise.all([replica("resetting", "reset"), replica("live")]);
    // A fresh forwarder per request: its first turn is the resetting replica's.
    const outcome = async (req: Request) => {
      const forwarder = forwarderTo(`${resetting.url},${live.url}`);
      try {
        return await answeredBy(forwarder, req).catch((err: unknown) => (isAppError(err) ? err.code : err));
      } finally {
        await forwarder.close();
      }
    };
    try {
      expect(await outcome(request("GET"))).toBe("live");
      expect(await outcome(request("HEAD"))).toBe("200");
      expect(await outcome(request("POST", { "idempotency-key": "k-1" }))).toBe("live");
      expect(await outcome(request("POST"))).toBe(503000);
      expect(await outcome(request("PATCH"))).toBe(503000);
      expect(await outcome(request("DELETE"))).toBe(503000);
      // A key on a route whose service does not claim it: the first attempt may have run (issue 42).
      const unclaimed = request("POST", { "idempotency-key": "k-2" });
      unclaimed.res!.locals.route = matchRoute("POST", "/api/v1/webhook");
      expect(await outcome(unclaimed)).toBe(503000);
      expect(resetting.hits).toHaveLength(7);
      expect(live.hits).toEqual(["GET /api/v1/client", "HEAD /api/v1/client", "POST /api/v1/client"]);
    } finally {
      await Promise.all([resetting.close(), live.close()]);
    }
  });

  it("answers 503000 when every replica refuses, after one retry", async () => {
    const forwarder = forwarderTo(`${await stoppedReplica()},${await stoppedReplica()}`);
    try {
      const err = await forwarder.forward("crm-records", request("GET"), undefined).catch((e: unknown) => e);
      expect(isAppError(err) && err.code).toBe(503000);
      await expect(forwarder.checkHealth("crm-records")).rejects.toThrow();
    } finally {
      await forwarder.close();
    }
  });
});

describe("UpstreamPool", () => {
  const refused = () => Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" });

  it("passes over a replica that refused for REFUSED_REST_MS, then tries it again", async () => {
    let now = 0;
    const pool = new UpstreamPool(
      ["a", "b", "c"],
      (url) => url,
      () => now,
    );
    const sent: string[] = [];
    const call = async (url: string) => {
      sent.push(url);
      if (url === "a") throw refused();
      return url;
    };
    const answers: string[] = [];
    for (let i = 0; i < 4; i++) answers.push(await pool.send(false, call));
    expect(answers).toEqual(["b", "c", "b", "c"]);
    expect(sent.filter((u) => u === "a")).toHaveLength(1);
    now += REFUSED_REST_MS;
    await pool.send(false, call);
    await pool.send(false, call);
    await pool.send(false, call);
    expect(sent.filter((u) => u === "a")).toHaveLength(2);
  });

  it("gives other failures back at once, unretried", async () => {
    const pool = new UpstreamPool(["a", "b"], (url) => url);
    let calls = 0;
    const timeout = Object.assign(new Error("headers timeout"), { code: "UND_ERR_HEADERS_TIMEOUT" });
    await expect(
      pool.send(true, async () => {
        calls++;
        throw timeout;
      }),
    ).rejects.toBe(timeout);
    expect(calls).toBe(1);
  });

  it("recognises refused and reset connections as undici and fetch report them", () => {
    expect(connectionFailure(refused())).toBe("refused");
    expect(connectionFailure(new TypeError("fetch failed", { cause: refused() }))).toBe("refused");
    expect(connectionFailure(Object.assign(new Error("other side closed"), { code: "UND_ERR_SOCKET" }))).toBe("reset");
    expect(connectionFailure(Object.assign(new Error("read ECONNRESET"), { code: "ECONNRESET" }))).toBe("reset");
    expect(connectionFailure(new Error("anything else"))).toBeUndefined();
    expect(safeToRepeat("GET", {})).toBe(true);
    expect(safeToRepeat("POST", { "idempotency-key": "k" }, true)).toBe(true);
    // Its service does not claim the key: the first attempt may have run, and the gateway's entry is in flight.
    expect(safeToRepeat("POST", { "idempotency-key": "k" })).toBe(false);
    expect(safeToRepeat("POST", {}, true)).toBe(false);
    expect(mayHaveRun(new TypeError("fetch failed", { cause: refused() }))).toBe(false);
    expect(mayHaveRun(Object.assign(new Error("other side closed"), { code: "UND_ERR_SOCKET" }))).toBe(true);
    expect(mayHaveRun(new Error("headers timeout"))).toBe(true);
    expect(safeToRepeat("DELETE", {})).toBe(false);
  });

  it("refuses a configuration that is not a list of http(s) URLs, naming the variable", () => {
    expect(loadConfig({ CRM_RECORDS_URL: "http://a:1,http://b:2" }).CRM_RECORDS_URL).toEqual(["http://a:1", "http://b:2"]);
    expect(() => loadConfig({ CRM_RECORDS_URL: "http://a:1,b:2" })).toThrow(/^Invalid configuration: CRM_RECORDS_URL: expected an http\(s\) URL/);
    expect(loadConfig({}).IDENTITY_URL).toEqual(["http://127.0.0.1:4001"]);
  });
});
