// A webhook created while PostgreSQL's connection is cut at its COMMIT (issue 42), through the
// harness's TCP proxy: the one-time signing secret is answered when the server committed, a plain
// 503000 when it did not, and a 503000 marked in doubt (OUTCOME_IN_DOUBT_HEADER: the gateway keeps the
// Idempotency-Key, so a retry cannot create a second webhook) when the server cannot be asked.
// PostgreSQL only: the embedded database has no connection to cut. The service's own loops run
// transactions too: the trap springs only on the connection that inserted the webhook.
import { Client } from "pg";
import { uuidv7 } from "@crm/contracts";
import { OUTCOME_IN_DOUBT_HEADER } from "@crm/errors";
import { describePostgres, FaultProxy, isPostgresCommit, testInfra } from "@crm/testing";
import type { WebhookDeliveryService } from "../src";
import { api, principal, startReceiver, startService, testDatabase, type Receiver, type TestDatabase } from "./support/harness";

const insertsWebhook = (chunk: Buffer) => {
  const text = chunk.toString("latin1");
  return text.includes("INSERT INTO") && text.includes('"Webhook"');
};

describePostgres("webhook-delivery: a webhook whose COMMIT loses its connection", () => {
  jest.setTimeout(60_000);
  let proxy: FaultProxy;
  let db: TestDatabase;
  let service: WebhookDeliveryService;
  let receiver: Receiver;
  let direct: Client;
  const businessId = uuidv7();
  const owner = principal(businessId);

  beforeAll(async () => {
    const target = new URL(testInfra.databaseUrl!);
    proxy = await FaultProxy.start({ target: { host: target.hostname, port: Number(target.port || 5432) } });
    db = await testDatabase("postgres");
    const proxied = new URL(db.env["DATABASE_URL"]!);
    proxied.host = proxy.address;
    service = await startService(db, { DATABASE_URL: proxied.toString() });
    receiver = await startReceiver();
    direct = new Client({ connectionString: db.env["DATABASE_URL"] });
    await direct.connect();
  });
  afterAll(async () => {
    proxy?.restore();
    await direct?.end();
    await service?.stop();
    await receiver?.close();
    await proxy?.close();
    await db?.drop();
  });
  afterEach(() => proxy.restore());

  const webhooksDescribed = async (description: string) =>
    (await direct.query(`SELECT count(*)::int AS n FROM "webhooks"."Webhook" WHERE "businessId" = $1 AND "description" = $2`, [businessId, description])).rows[0].n as number;
  const create = (description: string) => api(service, owner).post("/api/v1/webhook", { url: receiver.url, events: ["client.created"], description });

  it("committed, its answer lost: 201 with the secret; one webhook made", async () => {
    const sprung = proxy.dropAt(isPostgresCommit, { deliver: true, after: insertsWebhook });
    const res = await create("settled");
    await sprung;
    expect(res.status).toBe(201);
    expect(res.body.data.secret).toMatch(/^whsec_/);
    expect(res.headers[OUTCOME_IN_DOUBT_HEADER]).toBeUndefined();
    expect(await webhooksDescribed("settled")).toBe(1);
  });

  it("the COMMIT never reached the server: 503000 not marked, no webhook made", async () => {
    const sprung = proxy.dropAt(isPostgresCommit, { deliver: false, after: insertsWebhook });
    const res = await create("rolled-back");
    await sprung;
    expect([res.status, res.body.error?.code, res.headers["retry-after"]]).toEqual([503, 503000, "1"]);
    expect(res.headers[OUTCOME_IN_DOUBT_HEADER]).toBeUndefined();
    expect(await webhooksDescribed("rolled-back")).toBe(0);
  });

  it("committed, but the server cannot be asked in time: 503000 marked in doubt, no secret shown, the webhook made", async () => {
    const sprung = proxy.dropAt(isPostgresCommit, { deliver: true, cutAfter: true, after: insertsWebhook });
    const res = await create("unknown");
    await sprung;
    expect([res.status, res.body.error?.code, res.headers["retry-after"]]).toEqual([503, 503000, "1"]);
    expect(res.headers[OUTCOME_IN_DOUBT_HEADER]).toBe("1");
    expect(JSON.stringify(res.body)).not.toContain("whsec_");
    proxy.restore();
    expect(await webhooksDescribed("unknown")).toBe(1);
  });
});
