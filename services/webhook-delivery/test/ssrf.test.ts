// Private targets refused (decisions §6) with WEBHOOK_ALLOW_PRIVATE_TARGETS at its production
// default: at delivery time, literal or resolved, recorded as a failed attempt with status 0.
import { uuidv7 } from "@crm/contracts";
import { waitFor } from "@crm/testing";
import type { WebhookDeliveryService } from "../src";
import { api, inProcessBus, preferredMode, principal, publish, recordEvent, startReceiver, startService, testDatabase, type Receiver, type TestDatabase } from "./support/harness";

describe(`private targets refused on ${preferredMode}`, () => {
  let db: TestDatabase;
  let service: WebhookDeliveryService;
  let receiver: Receiver;
  const bus = inProcessBus();

  beforeAll(async () => {
    db = await testDatabase(preferredMode);
    service = await startService(db, { WEBHOOK_ALLOW_PRIVATE_TARGETS: "false" });
    receiver = await startReceiver();
  });
  afterAll(async () => {
    await service?.stop();
    await receiver?.close();
    await db?.drop();
  });

  it.each([
    "http://127.0.0.1/hook",
    "http://2130706433/hook",
    "http://0177.0.0.1/",
    "http://[::1]/",
    "http://[::ffff:127.0.0.1]/",
    "http://10.1.2.3/",
    "http://169.254.169.254/latest/meta-data",
    "https://192.168.0.10/",
  ])("accepts %s as a URL but refuses to deliver to it: a failed attempt with status 0", async (url) => {
    const business = uuidv7();
    const owner = api(service, principal(business));
    const hook = (await owner.post("/api/v1/webhook", { url, events: ["client.created"] }).expect(201)).body.data;
    await publish(bus, [recordEvent(business, "client.created")]);
    const delivery = await waitFor(async () => {
      const first = (await owner.get(`/api/v1/webhook/${hook.id}/deliveries`)).body.data[0];
      return first?.attempt === 1 ? first : undefined;
    });
    expect(delivery).toMatchObject({ status: "RETRYING", responseStatus: 0 });
    expect(delivery.responseBody).toMatch(/^Target address is not allowed: /);
  });

  it.each(["ftp://example.com/hook", "/relative/path", "javascript:alert(1)", "not a url"])("refuses %s at create time with 400001 on url", async (url) => {
    const res = await api(service, principal(uuidv7()))
      .post("/api/v1/webhook", { url, events: ["client.created"] })
      .expect(400);
    expect(res.body.error).toMatchObject({ code: 400001, message: "Validation failed" });
    expect(res.body.error.details[0].path).toBe("url");
  });

  it("records a host name resolving to loopback as a failed attempt with status 0, sending nothing", async () => {
    const business = uuidv7();
    const owner = api(service, principal(business));
    const url = receiver.url.replace("127.0.0.1", "localhost");
    const hook = (await owner.post("/api/v1/webhook", { url, events: ["client.deleted"] }).expect(201)).body.data;
    await publish(bus, [recordEvent(business, "client.deleted")]);
    const delivery = await waitFor(
      async () => (await owner.get(`/api/v1/webhook/${hook.id}/deliveries`)).body.data[0]?.attempt === 1 && (await owner.get(`/api/v1/webhook/${hook.id}/deliveries`)).body.data[0],
    );
    expect(delivery).toMatchObject({ status: "RETRYING", responseStatus: 0 });
    expect(delivery.responseBody).toMatch(/^Target address is not allowed: /);
    expect(receiver.requests).toHaveLength(0);
  });
});
