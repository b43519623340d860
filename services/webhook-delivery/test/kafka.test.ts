// The same flow through Kafka (KAFKA_BROKERS, testcontainers, or librdkafka's mock cluster from kcat):
// a real consumer group, a consumer stopped mid-stream, events published while it is down, and
// re-deliveries. A replacement consumer replays the topic from the start (a new group: the mock
// cluster does not process LeaveGroup, so rejoining the old group waits out a 30 s session), which
// is the harshest re-delivery there is: nothing may be delivered twice, nothing may be lost.
import { Webhook as StandardWebhook } from "standardwebhooks";
import { RECORDS_TOPIC, uuidv7, type EventEnvelope } from "@crm/contracts";
import { KafkaBus } from "@crm/event-bus";
import { testInfra, uniqueName, waitFor } from "@crm/testing";
import { api, preferredMode, principal, recordEvent, silent, setUpDelivery } from "./support/harness";
import { verifyInterfaceSignature } from "@crm/testing";

const describeKafka = testInfra.kafkaBrokers ? describe : describe.skip;

describeKafka("delivery through Kafka", () => {
  jest.setTimeout(90_000);
  const setup = setUpDelivery(preferredMode, { service: false });
  let producer: KafkaBus;

  beforeAll(() => {
    producer = new KafkaBus({ brokers: testInfra.kafkaBrokers!.split(","), clientId: uniqueName("producer"), logger: silent });
  });
  afterAll(() => producer?.close());

  it("delivers signed events, and a consumer restart loses and duplicates nothing", async () => {
    const env = { KAFKA_BROKERS: testInfra.kafkaBrokers! };
    const first = await setup.start(env, { consumerGroupId: uniqueName("webhook-delivery") });
    const business = uuidv7();
    const owner = api(first, principal(business));
    const hook = (await owner.post("/api/v1/webhook", { url: setup.receiver.url, events: ["contact.created"] }).expect(201)).body.data;
    const events = Array.from({ length: 10 }, (_, n) => recordEvent(business, "contact.created", { n: String(n) }));
    const send = (batch: EventEnvelope[]) =>
      producer.publish(
        RECORDS_TOPIC,
        batch.map((value) => ({ key: business, value })),
      );
    const received = () => setup.receiver.requests.filter((r) => JSON.parse(r.rawBody).businessId === business && r.headers["x-service-event"] === "contact.created");
    // The witness: an event of another type to a webhook of its own, sent after all the others on the
    // same key (one partition, in order). Once its delivery succeeds, every event before it was handled.
    const witness = (await owner.post("/api/v1/webhook", { url: setup.receiver.url, events: ["contact.deleted"] }).expect(201)).body.data;

    await send(events.slice(0, 5));
    await waitFor(() => received().length >= 5, 45_000, 50);
    const sample = received()[0]!;
    expect(sample.headers["x-service-event"]).toBe("contact.created");
    expect(verifyInterfaceSignature(hook.secret, sample.rawBody, sample.headers["x-service-signature"] as string)).toBe(true);
    expect(() => new StandardWebhook(hook.secret).verify(sample.rawBody, sample.headers as Record<string, string>)).not.toThrow();

    await first.stop();
    // While nobody consumes: new events, and a re-delivery of two handled ones.
    await send([...events.slice(5), ...events.slice(0, 2), recordEvent(business, "contact.deleted")]);
    const second = await setup.start(env, { consumerGroupId: uniqueName("webhook-delivery") });

    await waitFor(async () => (await second.prisma.delivery.count({ where: { webhookId: hook.id, status: "SUCCESS" } })) === 10, 45_000, 100);
    await waitFor(async () => (await second.prisma.delivery.count({ where: { webhookId: witness.id, status: "SUCCESS" } })) === 1, 45_000, 100);
    expect(await second.prisma.delivery.count({ where: { webhookId: hook.id } })).toBe(10);
    const numbers = received().map((r) => JSON.parse(r.rawBody).data.n as string);
    expect(numbers.sort()).toEqual(events.map((e) => String(e.data.n)).sort());
    const log = (await api(second, principal(business)).get(`/api/v1/webhook/${hook.id}/deliveries?perPage=100`).expect(200)).body;
    expect(log.meta.total).toBe(10);
    expect(new Set(log.data.map((d: { id: string }) => d.id))).toEqual(new Set(received().map((r) => r.headers["x-service-delivery-id"])));
  });

  // The mock cluster ignores LeaveGroup, so a stopped member looks exactly like a killed one: its
  // replacement in the SAME group gets the partitions only once the old session has expired. With the
  // old 30 s session this took ~33 s; the bound below is generous for a 6 s session on a loaded machine.
  it("a replacement in the same consumer group resumes well before a 30 s session would expire", async () => {
    const env = { KAFKA_BROKERS: testInfra.kafkaBrokers! };
    const group = uniqueName("webhook-delivery");
    const first = await setup.start(env, { consumerGroupId: group });
    const business = uuidv7();
    await api(first, principal(business))
      .post("/api/v1/webhook", { url: setup.receiver.url, events: ["contact.created"] })
      .expect(201);
    const received = () => setup.receiver.requests.filter((r) => JSON.parse(r.rawBody).businessId === business);
    const send = (event: EventEnvelope) => producer.publish(RECORDS_TOPIC, [{ key: business, value: event }]);

    await send(recordEvent(business, "contact.created", { n: "before" }));
    await waitFor(() => received().length >= 1, 45_000, 50);
    await first.stop();

    const restartedAt = Date.now();
    const _second = await setup.start(env, { consumerGroupId: group });
    await send(recordEvent(business, "contact.created", { n: "after" }));
    await waitFor(() => received().length >= 2, 20_000, 50);
    expect(Date.now() - restartedAt).toBeLessThan(20_000);
    expect(received().map((r) => JSON.parse(r.rawBody).data.n)).toEqual(["before", "after"]);
  });
});
