// Nothing reaches a service before its request is authenticated and counted (docs/security.md §9):
// not a repeated read of a known caller, not one of a caller signed out or changed meanwhile, and
// not a burst beyond the budget. (The early forward of reads that did, D3, is a rejected experiment in
// docs/performance.md.)
import http from "node:http";
import type { AddressInfo } from "node:net";
import supertest from "supertest";
import { rolePermissions } from "@crm/contracts";
import { MemoryKvStore } from "@crm/kv-store";
import { createLogger } from "@crm/logger";
import { verifyInternalToken } from "@crm/service-kit";
import type { Forwarder } from "../src/http/forwarder";
import { createSecurity, type Security } from "../src/security";
import { gatewayApp } from "./support/gateway-app.fixture";
import { FakeIdentity, INTERNAL_SECRET, JWT_SECRET } from "./support/security.fixture";

/** The shared store, with its reads held back on demand: the auth read then answers only when released. */
class HeldKvStore extends MemoryKvStore {
  private gate: Promise<void> | undefined;
  private open: (() => void) | undefined;
  held = 0;

  hold(): void {
    this.gate = new Promise((resolve) => (this.open = resolve));
  }

  release(): void {
    this.gate = undefined;
    this.open?.();
  }

  override async getMany(keys: readonly string[]): Promise<Array<string | null>> {
    if (this.gate) {
      this.held += 1;
      await this.gate;
    }
    return super.getMany(keys);
  }
}

interface Seen {
  method: string;
  url: string;
  permissions: string[];
}

const RATE_LIMIT_MAX = 30;

describe("reads forwarded after their authentication and count", () => {
  let kv: HeldKvStore;
  let identity: FakeIdentity;
  let upstream: http.Server;
  let server: http.Server;
  let security: Security;
  let forwarder: Forwarder;
  const seen: Seen[] = [];

  beforeAll(async () => {
    kv = new HeldKvStore();
    identity = new FakeIdentity(kv);
    await identity.start();
    // The service: answers with the permissions of the principal it was asked as.
    upstream = http.createServer((req, res) => {
      req.resume();
      req.on("end", () => {
        const { principal } = verifyInternalToken(String(req.headers["x-internal-token"]), INTERNAL_SECRET);
        const entry = { method: req.method!, url: req.url!, permissions: principal?.permissions ?? [] };
        seen.push(entry);
        res.writeHead(req.method === "POST" ? 201 : 200, { "content-type": "application/json" });
        res.end(JSON.stringify({ success: true, data: entry }));
      });
    });
    await new Promise<void>((resolve) => upstream.listen(0, "127.0.0.1", resolve));
    const upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
    const logger = createLogger({ service: "gateway", level: "silent" });
    security = createSecurity({
      config: { CORS_ALLOWED_ORIGINS: [], RATE_LIMIT_MAX, RATE_LIMIT_WINDOW_MS: 60_000, JWT_SECRET },
      kv,
      identityUrl: identity.url,
      internalTokenSecret: INTERNAL_SECRET,
      logger,
    });
    const gateway = gatewayApp({
      logger,
      security,
      kv,
      services: { identity: upstreamUrl, "crm-records": upstreamUrl, "webhook-delivery": upstreamUrl },
      name: "forwarded-after-guard",
      trustedProxies: [],
    });
    forwarder = gateway.forwarder;
    const app = gateway.app;
    server = http.createServer(app);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  });
  afterEach(() => kv.release());
  afterAll(async () => {
    for (const s of [server, upstream]) {
      s?.closeAllConnections();
      await new Promise((resolve) => s?.close(resolve));
    }
    await security?.close();
    await forwarder?.close();
    await identity.stop();
    await kv.close();
  });

  const get = (token: string, path = "/api/v1/client") => supertest(server).get(path).set("authorization", `Bearer ${token}`);
  /** Requests the service has seen since `from`. */
  const since = (from: number) => seen.slice(from);
  const until = async (condition: () => boolean) => {
    for (let i = 0; i < 200 && !condition(); i++) await new Promise((resolve) => setTimeout(resolve, 5));
    expect(condition()).toBe(true);
  };

  it("a repeated read waits for its auth state to be read, and is answered once that read allows it", async () => {
    const owner = await identity.addUser("OWNER");
    const { token } = await identity.signIn(owner);
    // The first read of a token is forwarded after its authentication: nothing is known about it yet.
    kv.hold();
    const heldBefore = kv.held;
    const start = seen.length;
    const first = get(token).then((res) => res);
    await until(() => kv.held > heldBefore);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(since(start)).toEqual([]);
    kv.release();
    expect((await first).status).toBe(200);

    kv.hold();
    const heldAgain = kv.held;
    const next = seen.length;
    const second = get(token).then((res) => res);
    await until(() => kv.held > heldAgain);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(since(next)).toEqual([]);
    kv.release();
    const answer = await second;
    expect(answer.status).toBe(200);
    expect(answer.body.data.permissions).toEqual(rolePermissions.OWNER);
    expect(answer.headers["x-ratelimit-remaining"]).toBeDefined();
    expect(since(next)).toHaveLength(1);
  });

  it("a caller signed out meanwhile gets 401011, and nothing reaches the service", async () => {
    const owner = await identity.addUser("OWNER");
    const { token, sid } = await identity.signIn(owner);
    expect((await get(token)).status).toBe(200);
    await identity.revokeSession(sid);
    const start = seen.length;
    const refused = await get(token);
    expect(refused.status).toBe(401);
    expect(refused.body).toEqual({ success: false, error: { code: 401011, message: "Access token not found in whitelist" } });
    expect(since(start)).toEqual([]);
  });

  it("a caller whose role changed meanwhile is answered as who they are now", async () => {
    const user = await identity.addUser("OWNER");
    const { token } = await identity.signIn(user);
    expect((await get(token)).body.data.permissions).toEqual(rolePermissions.OWNER);
    await identity.setRole(user, "VIEWER");
    const start = seen.length;
    const answer = await get(token);
    expect(answer.status).toBe(200);
    expect(answer.body.data.permissions).toEqual(rolePermissions.VIEWER);
    expect(since(start).map((s) => s.permissions)).toEqual([rolePermissions.VIEWER]);
  });

  it("a write waits for its authentication", async () => {
    const owner = await identity.addUser("OWNER");
    const { token } = await identity.signIn(owner);
    expect((await get(token)).status).toBe(200);
    kv.hold();
    const heldBefore = kv.held;
    const start = seen.length;
    const created = supertest(server)
      .post("/api/v1/client")
      .set("authorization", `Bearer ${token}`)
      .set("content-type", "application/json")
      .send("{}")
      .then((res) => res);
    await until(() => kv.held > heldBefore);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(since(start)).toEqual([]);
    kv.release();
    expect((await created).status).toBe(201);
    expect(since(start).map((s) => s.method)).toEqual(["POST"]);
  });

  it("a caller whose budget is spent is not forwarded, and gets 429000", async () => {
    const owner = await identity.addUser("OWNER");
    const { token } = await identity.signIn(owner);
    for (let i = 0; i < RATE_LIMIT_MAX; i++) expect((await get(token)).status).toBe(200);
    const start = seen.length;
    const limited = await get(token);
    expect(limited.status).toBe(429);
    expect(limited.body.error.code).toBe(429000);
    expect(since(start)).toEqual([]);
  });

  it("no read goes without the route's permission, and the refusal is the permission's", async () => {
    const viewer = await identity.addUser("VIEWER");
    const { token } = await identity.signIn(viewer);
    expect((await get(token)).status).toBe(200);
    const start = seen.length;
    const refused = await get(token, "/api/v1/webhook");
    expect(refused.body.error.code).toBe(401014);
    expect(since(start)).toEqual([]);
  });

  it("a burst of 500 reads with 1 request of budget left: 1 answered, 499 refused 429000, 1 reached the service", async () => {
    const owner = await identity.addUser("OWNER");
    const { token } = await identity.signIn(owner);
    for (let i = 0; i < RATE_LIMIT_MAX - 1; i++) expect((await get(token)).status).toBe(200);
    // All 500 arrive while the first one's authentication is still under way (a Redis round trip).
    kv.hold();
    const heldBefore = kv.held;
    const start = seen.length;
    const burst = Promise.all(Array.from({ length: 500 }, () => get(token).then((res) => [res.status, res.body.error?.code ?? null])));
    await until(() => kv.held >= heldBefore + 500);
    kv.release();
    const answers = await burst;
    const tally = (status: number) => answers.filter(([s]) => s === status).length;
    expect({ ok: tally(200), limited: answers.filter(([s, code]) => s === 429 && code === 429000).length }).toEqual({ ok: 1, limited: 499 });
    expect(since(start)).toHaveLength(1);
  }, 30_000);

  it("a burst of reads of one known caller waits for its authentication", async () => {
    const owner = await identity.addUser("OWNER");
    const { token } = await identity.signIn(owner);
    expect((await get(token)).status).toBe(200);
    kv.hold();
    const heldBefore = kv.held;
    const start = seen.length;
    const burst = Promise.all(Array.from({ length: 10 }, () => get(token).then((res) => res.status)));
    await until(() => kv.held >= heldBefore + 10);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(since(start)).toHaveLength(0);
    kv.release();
    expect(await burst).toEqual(Array(10).fill(200));
    expect(since(start)).toHaveLength(10);
  });
});
