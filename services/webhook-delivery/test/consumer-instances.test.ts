// Two instances on one PostgreSQL database consume in turns (one consumer group). Whatever one
// instance remembers about a business's subscribers (records.consumer.ts looks some businesses up
// first), a webhook created or deactivated through the other applies from the very next event.
import { uuidv7 } from "@crm/contracts";
import { describePostgres } from "@crm/testing";
import type { WebhookDeliveryService } from "../src";
import { api, inProcessBus, principal, publish, recordEvent, setUpDelivery } from "./support/harness";

// Both ways: WEBHOOK_CONSUMER_LOOKUP_FIRST=false remembers nothing, every batch goes to the create statement (docs/performance.md D27).
describePostgres.each([true, false])("the records consumer of two instances on one PostgreSQL database (WEBHOOK_CONSUMER_LOOKUP_FIRST=%s)", (lookupFirst) => {
  jest.setTimeout(30_000);
  const setup = setUpDelivery("postgres", { service: false });
  let one: WebhookDeliveryService;
  let two: WebhookDeliveryService;
  const bus = inProcessBus();

  beforeAll(async () => {
    one = await setup.start({ WEBHOOK_CONSUMER_LOOKUP_FIRST: String(lookupFirst) });
    two = await setup.start({ WEBHOOK_CONSUMER_LOOKUP_FIRST: String(lookupFirst) });
  });

  /** Publishes each event on its own: the in-process bus hands each publish to the next instance in turn, and resolves once it is handled. */
  async function consumeOneByOne(business: string, count: number): Promise<string[]> {
    const ids: string[] = [];
    for (let i = 0; i < count; i++) {
      const event = recordEvent(business, "client.created", { id: uuidv7(), firstName: "Ada" });
      ids.push(event.id);
      await publish(bus, [event]);
    }
    return ids;
  }

  const deliveriesOf = (eventIds: string[]) => one.prisma.delivery.findMany({ where: { eventId: { in: eventIds } } });

  it("gives a webhook created on one instance the next event either instance consumes, and none once it is deactivated on the other", async () => {
    const business = uuidv7();
    // Both instances consume an event of the business while it has no webhook.
    expect(await deliveriesOf(await consumeOneByOne(business, 2))).toEqual([]);

    const hook = (
      await api(one, principal(business))
        .post("/api/v1/webhook", { url: setup.receiver.url, events: ["client.created"] })
        .expect(201)
    ).body.data.id as string;
    const afterCreate = await consumeOneByOne(business, 2);
    const created = await deliveriesOf(afterCreate);
    expect(created.map((d) => [d.eventId, d.webhookId]).sort()).toEqual(afterCreate.map((id) => [id, hook]).sort());

    await api(two, principal(business)).put(`/api/v1/webhook/${hook}`, { isActive: false }).expect(200);
    expect(await deliveriesOf(await consumeOneByOne(business, 2))).toEqual([]);
  });
});
