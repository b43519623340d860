// Idempotency-Key through the gateway (docs/security.md, rules 4 and 10): a kept answer is replayed to
// the caller that made the request and to nobody else of its business, and an entry a gateway cannot
// read (another IDEMPOTENCY_ENCRYPTION_KEY) refuses its key instead of running the request again.
// Two gateways on one store, in-process and on Redis (the distributed mode's store).
// And a service's 503000 for a write in doubt (issue 42): its key is kept, never run twice.
import http from "node:http";
import type { AddressInfo } from "node:net";
import supertest from "supertest";
import { type KvStore, MemoryKvStore, RedisKvStore } from "@crm/kv-store";
import { OUTCOME_IN_DOUBT_HEADER } from "@crm/errors";
import { createLogger } from "@crm/logger";
import { testInfra, uniqueName } from "@crm/testing";
import type { Forwarder } from "../src/http/forwarder";
import { createSecurity, type Security } from "../src/security";
import { gatewayApp } from "./support/gateway-app.fixture";
import { FakeIdentity, INTERNAL_SECRET, JWT_SECRET } from "./support/security.fixture";

const modes: Array<[string, () => [KvStore, KvStore, string | undefined]]> = [
  [
    "the in-process store",
    () => {
      const kv = new MemoryKvStore();
      return [kv, kv, undefined];
    },
  ],
];
if (testInfra.redisUrl) {
  modes.push([
    "Redis",
    () => {
      const prefix = `${uniqueName("idem-callers")}:`;
      return [new RedisKvStore(testInfra.redisUrl!, prefix), new RedisKvStore(testInfra.redisUrl!, prefix), testInfra.redisUrl];
    },
  ]);
}

describe.each(modes)("Idempotency-Key callers and unreadable entries, on %s", (_mode, openStores) => {
  let kvA: KvStore;
  let kvB: KvStore;
  let identity: FakeIdentity;
  let upstream: http.Server;
  /** Webhooks the service created: each POST that reached it. */
  let created = 0;
  const gateways: Array<{ security: Security; forwarder: Forwarder; agent: supertest.Agent }> = [];

  function gateway(kv: KvStore, redisUrl: string | undefined, idempotencyKey: string) {
    const logger = createLogger({ service: "gateway", level: "silent" });
    const security = createSecurity({
      config: { CORS_ALLOWED_ORIGINS: [], RATE_LIMIT_MAX: 1000, RATE_LIMIT_WINDOW_MS: 60_000, JWT_SECRET },
      kv,
      ...(redisUrl ? { redisUrl } : {}),
      identityUrl: identity.url,
      internalTokenSecret: INTERNAL_SECRET,
      logger,
    });
    const url = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
    const { app, forwarder } = gatewayApp({
      logger,
      security,
      kv,
      services: { identity: url, "crm-records": url, "webhook-delivery": url },
      name: "idempotency-callers",
      idempotencyKey,
      trustedProxies: [],
    });
    const built = { security, forwarder, agent: supertest.agent(app) };
    gateways.push(built);
    return built.agent;
  }

  let a: supertest.Agent;
  let b: supertest.Agent;
  beforeAll(async () => {
    const [one, two, redisUrl] = openStores();
    kvA = one;
    kvB = two;
    identity = new FakeIdentity(kvA);
    await identity.start();
    // webhook-delivery: each create makes a new one-time secret.
    upstream = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (chunk: Buffer) => chunks.push(chunk));
      req.on("end", () => {
        created += 1;
        // A service that got the request and never answered (a crash, a time-out): the gateway cannot tell.
        if (Buffer.concat(chunks).toString().includes('"description":"no-answer"')) return void req.socket.destroy();
        // A service whose database lost the connection at COMMIT (issue 42): in doubt, or known not written.
        const lost = /"description":"(in-doubt|not-written)"/.exec(Buffer.concat(chunks).toString())?.[1];
        if (lost) {
          const marker = lost === "in-doubt" ? { [OUTCOME_IN_DOUBT_HEADER]: "1" } : {};
          res.writeHead(503, { "content-type": "application/json", "retry-after": "1", ...marker });
          return void res.end(JSON.stringify({ success: false, error: { code: 503000, message: "Service unavailable" } }));
        }
        res.writeHead(201, { "content-type": "application/json" });
        res.end(JSON.stringify({ success: true, data: { id: `w${created}`, secret: `whsec_secret${created}` } }));
      });
    });
    await new Promise<void>((resolve) => upstream.listen(0, "127.0.0.1", resolve));
    a = gateway(kvA, redisUrl, "idempotency-key-of-gateway-a-0123456789abcdef");
    b = gateway(kvB, redisUrl, "idempotency-key-of-gateway-b-0123456789abcdef");
  });
  afterAll(async () => {
    for (const g of gateways) {
      await g.security.close();
      await g.forwarder.close();
    }
    upstream?.closeAllConnections();
    await new Promise((resolve) => upstream?.close(resolve));
    await identity?.stop();
    await kvA?.close();
    if (kvB !== kvA) await kvB?.close();
  });

  const createWebhook = (agent: supertest.Agent, credential: Record<string, string>, key: string) =>
    agent
      .post("/api/v1/webhook")
      .set(credential)
      .set("idempotency-key", key)
      .set("content-type", "application/json")
      .send('{"url":"https://example.com/hook","events":["client.created"]}');

  it("another user or API key of the business gets 409002 and nothing of the first answer; the request does not run again", async () => {
    const owner = await identity.addUser("OWNER");
    const ownerJwt = { authorization: `Bearer ${(await identity.signIn(owner)).token}` };
    const scopedKey = { "x-api-key": (await identity.createKey(owner, { scopes: ["webhooks.create"] })).key };
    const admin = await identity.addUser("ADMIN", { businessId: owner.businessId });
    const adminJwt = { authorization: `Bearer ${(await identity.signIn(admin)).token}` };
    const key = uniqueName("k");

    const first = await createWebhook(a, ownerJwt, key);
    expect(first.status).toBe(201);
    const secret: string = first.body.data.secret;
    const ran = created;

    for (const other of [scopedKey, adminJwt]) {
      const refused = await createWebhook(a, other, key);
      expect([refused.status, refused.body.error.code]).toEqual([409, 409002]);
      expect(refused.body.error.details).toEqual([{ path: "Idempotency-Key", message: expect.stringContaining("another user or API key") }]);
      expect(refused.text).not.toContain(secret);
      expect(refused.text).not.toContain("whsec_");
      expect(refused.headers["idempotent-replayed"]).toBeUndefined();
    }
    expect(created).toBe(ran);

    // The caller that made it still gets its answer replayed.
    const replayed = await createWebhook(a, ownerJwt, key);
    expect([replayed.status, replayed.body.data.secret, replayed.headers["idempotent-replayed"]]).toEqual([201, secret, "true"]);
    expect(created).toBe(ran);
  });

  it("a gateway with another IDEMPOTENCY_ENCRYPTION_KEY refuses the key (409002 with a detail) and never runs the request twice", async () => {
    const owner = await identity.addUser("OWNER");
    const ownerJwt = { authorization: `Bearer ${(await identity.signIn(owner)).token}` };
    const key = uniqueName("k");
    expect((await createWebhook(a, ownerJwt, key)).status).toBe(201);
    const ran = created;

    const elsewhere = await createWebhook(b, ownerJwt, key);
    expect([elsewhere.status, elsewhere.body.error.code]).toEqual([409, 409002]);
    expect(elsewhere.body.error.details).toEqual([{ path: "Idempotency-Key", message: expect.stringContaining("cannot be read") }]);
    expect(created).toBe(ran);
    // The entry is still there for the gateway that wrote it.
    expect((await createWebhook(a, ownerJwt, key)).headers["idempotent-replayed"]).toBe("true");
    expect(created).toBe(ran);
  });

  it("a write in doubt (issue 42): 503000 with Retry-After, then 409002 'may have completed' for its retry, never a second run; one not written runs again", async () => {
    const owner = await identity.addUser("OWNER");
    const ownerJwt = { authorization: `Bearer ${(await identity.signIn(owner)).token}` };
    const send = (agent: supertest.Agent, key: string, description: string) =>
      agent
        .post("/api/v1/webhook")
        .set(ownerJwt)
        .set("idempotency-key", key)
        .set("content-type", "application/json")
        .send(JSON.stringify({ url: "https://example.com/hook", events: ["client.created"], description }));

    const key = uniqueName("k");
    const first = await send(a, key, "in-doubt");
    expect([first.status, first.body.error.code, first.headers["retry-after"]]).toEqual([503, 503000, "1"]);
    expect(first.headers[OUTCOME_IN_DOUBT_HEADER]).toBeUndefined();
    const ran = created;
    for (const agent of [a, a]) {
      const retry = await send(agent, key, "in-doubt");
      expect([retry.status, retry.body.error.code]).toEqual([409, 409002]);
      expect(retry.body.error.details).toEqual([{ path: "Idempotency-Key", message: expect.stringContaining("may have completed") }]);
    }
    expect(created).toBe(ran);

    const other = uniqueName("k");
    expect((await send(a, other, "not-written")).status).toBe(503);
    expect((await send(a, other, "not-written")).status).toBe(503);
    expect(created).toBe(ran + 2);
  });

  it("a POST that reached its service and got no answer keeps its key (issue 42): 503000, then 409002 'may have completed', never a second run", async () => {
    const owner = await identity.addUser("OWNER");
    const ownerJwt = { authorization: `Bearer ${(await identity.signIn(owner)).token}` };
    const send = (key: string) =>
      a
        .post("/api/v1/webhook")
        .set(ownerJwt)
        .set("idempotency-key", key)
        .set("content-type", "application/json")
        .send(JSON.stringify({ url: "https://example.com/hook", events: ["client.created"], description: "no-answer" }));
    const key = uniqueName("k");
    const before = created;
    expect([(await send(key)).status, created]).toEqual([503, before + 1]);
    const retry = await send(key);
    expect([retry.status, retry.body.error.code]).toEqual([409, 409002]);
    expect(retry.body.error.details).toEqual([{ path: "Idempotency-Key", message: expect.stringContaining("did not answer") }]);
    expect(created).toBe(before + 1);
  });
});
