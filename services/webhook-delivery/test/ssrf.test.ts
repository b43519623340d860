// Private targets refused (decisions §6) with WEBHOOK_ALLOW_PRIVATE_TARGETS at its production
// default: at delivery time, literal or resolved, recorded as a failed attempt with status 0. The
// delivery log shows a generic reason, neither the address a name resolved to nor whether the name
// exists (issue 35 item 12); the service's log has the detail for operators.
import { Writable } from "node:stream";
import { uuidv7 } from "@crm/contracts";
import { createLogger } from "@crm/logger";
import { waitFor } from "@crm/testing";
import { TARGET_UNREACHABLE_MESSAGE } from "../src/outbound/dispatcher";
import { api, inProcessBus, preferredMode, principal, publish, recordEvent, setUpDelivery } from "./support/harness";

/** Every line the service logs. */
const logged: string[] = [];
const logger = createLogger({
  service: "webhook-delivery",
  level: "info",
  destination: new Writable({
    write(chunk: Buffer, _encoding, done) {
      logged.push(chunk.toString("utf8"));
      done();
    },
  }),
});

describe(`private targets refused on ${preferredMode}`, () => {
  const setup = setUpDelivery(preferredMode, { service: false });
  const bus = inProcessBus();
  beforeAll(async () => {
    setup.service = await setup.start({ WEBHOOK_ALLOW_PRIVATE_TARGETS: "false" }, { logger });
  });

  /** The operator's log line about this delivery's refused or unresolved target. */
  const operatorDetail = (deliveryId: string) =>
    waitFor(
      () => logged.map((line) => JSON.parse(line) as { deliveryId?: string; detail?: string }).find((line) => line.deliveryId === deliveryId && line.detail)?.detail,
      5_000,
      20,
    );

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
    const owner = api(setup.service, principal(business));
    const hook = (await owner.post("/api/v1/webhook", { url, events: ["client.created"] }).expect(201)).body.data;
    await publish(bus, [recordEvent(business, "client.created")]);
    const delivery = await waitFor(async () => {
      const first = (await owner.get(`/api/v1/webhook/${hook.id}/deliveries`)).body.data[0];
      return first?.attempt === 1 ? first : undefined;
    });
    expect(delivery).toMatchObject({ status: "RETRYING", responseStatus: 0, responseBody: TARGET_UNREACHABLE_MESSAGE });
    expect(await operatorDetail(delivery.id)).toMatch(/^Target address is not allowed: \S+$/);
  });

  it("says the same of a name that does not exist, and logs the resolver's answer for operators", async () => {
    const business = uuidv7();
    const owner = api(setup.service, principal(business));
    const hook = (await owner.post("/api/v1/webhook", { url: "http://no-such-host.invalid/hook", events: ["client.created"] }).expect(201)).body.data;
    await publish(bus, [recordEvent(business, "client.created")]);
    const delivery = await waitFor(async () => {
      const first = (await owner.get(`/api/v1/webhook/${hook.id}/deliveries`)).body.data[0];
      return first?.attempt === 1 ? first : undefined;
    }, 15_000);
    expect(delivery).toMatchObject({ status: "RETRYING", responseStatus: 0, responseBody: TARGET_UNREACHABLE_MESSAGE });
    expect(await operatorDetail(delivery.id)).toMatch(/^DNS lookup failed for no-such-host\.invalid \(E[A-Z_]+\)$/);
  });

  it.each(["ftp://example.com/hook", "/relative/path", "javascript:alert(1)", "not a url"])("refuses %s at create time with 400001 on url", async (url) => {
    const res = await api(setup.service, principal(uuidv7()))
      .post("/api/v1/webhook", { url, events: ["client.created"] })
      .expect(400);
    expect(res.body.error).toMatchObject({ code: 400001, message: "Validation failed" });
    expect(res.body.error.details[0].path).toBe("url");
  });

  it("records a host name resolving to loopback as a failed attempt with status 0, sending nothing", async () => {
    const business = uuidv7();
    const owner = api(setup.service, principal(business));
    const url = setup.receiver.url.replace("127.0.0.1", "localhost");
    const hook = (await owner.post("/api/v1/webhook", { url, events: ["client.deleted"] }).expect(201)).body.data;
    await publish(bus, [recordEvent(business, "client.deleted")]);
    const delivery = await waitFor(
      async () => (await owner.get(`/api/v1/webhook/${hook.id}/deliveries`)).body.data[0]?.attempt === 1 && (await owner.get(`/api/v1/webhook/${hook.id}/deliveries`)).body.data[0],
    );
    expect(delivery).toMatchObject({ status: "RETRYING", responseStatus: 0, responseBody: TARGET_UNREACHABLE_MESSAGE });
    expect(await operatorDetail(delivery.id)).toMatch(/^Target address is not allowed: (127\.0\.0\.1|::1)$/);
    expect(setup.receiver.requests).toHaveLength(0);
  });
});
