// A delivery's `data` is the record as GET shows it, byte for byte: the same keys in the same order
// with the same values, for every entity and every action. Checked on the raw bytes on both sides
// (a parsed comparison would not see key order).
import { waitFor } from "@crm/testing";
import { ApiClient } from "./api-client";
import { startReceiver } from "./harness";

type Entity = "client" | "contact" | "invoice" | "quote" | "product" | "service" | "employee";

/** Each entity's create and update bodies; `{client}` stands for the client created first. */
const bodies = (clientId: string): Record<Entity, { create: object; update: object }> => ({
  client: { create: { firstName: "Ada", lastName: "Lovelace", email: "ada@example.test", phone: "+44 20 7946 0000" }, update: { notes: "Grüße ✓" } },
  contact: { create: { clientId, type: "PHONE", value: "+44 20 7946 0001" }, update: { isPrimary: true } },
  invoice: { create: { clientId, items: [{ description: "Work", quantity: 2, unitPrice: 10.5 }], dueDate: "2026-03-01" }, update: { status: "SENT" } },
  quote: { create: { clientId, items: [{ description: "Plan", quantity: 1, unitPrice: 99 }] }, update: { status: "ACCEPTED" } },
  product: { create: { name: "Widget", unitPrice: 9.99, sku: "W-1" }, update: { description: "Blue" } },
  service: { create: { name: "Consulting", unitPrice: 120, unit: "hour" }, update: { isActive: false } },
  employee: { create: { firstName: "Grace", lastName: "Hopper" }, update: { position: "Rear admiral" } },
});

/** GET's record without the relations it loads by default: events carry none. */
const withoutDefaultRelations: Partial<Record<Entity, string>> = { client: "?include=-contacts" };

/** The bytes of `"data":{...}` in a JSON text written by JSON.stringify (both the API and the signer write so). */
function dataBytes(text: string): string {
  const data = (JSON.parse(text) as { data: unknown }).data;
  const bytes = `"data":${JSON.stringify(data)}`;
  // Re-serialising reproduces the original only when nothing was re-ordered or re-formatted in between.
  expect(text).toContain(bytes);
  return bytes;
}

export async function runEventDataOrderFlow(baseUrl: string, suffix: string): Promise<void> {
  const api = new ApiClient(baseUrl);
  await api.signUp(`order-${suffix}`);
  const receiver = await startReceiver(200);
  try {
    const entities: Entity[] = ["client", "contact", "invoice", "quote", "product", "service", "employee"];
    const events = entities.flatMap((entity) => ["created", "updated", "deleted"].map((action) => `${entity}.${action}`));
    expect((await api.call("POST", "/api/v1/webhook", { url: receiver.url, events })).status).toBe(201);

    const expected: Array<{ event: string; id: string; bytes: string }> = [];
    const read = async (entity: Entity, id: string) => {
      const res = await api.call("GET", `/api/v1/${entity}/${id}${withoutDefaultRelations[entity] ?? ""}`);
      expect(res.status).toBe(200);
      return dataBytes(res.text);
    };
    const ids = {} as Record<Entity, string>;
    let clientId = "";
    for (const entity of entities) {
      const created = await api.call("POST", `/api/v1/${entity}`, bodies(clientId)[entity].create);
      expect(created.status).toBe(201);
      ids[entity] = created.body.data.id as string;
      if (entity === "client") clientId = ids.client;
      expected.push({ event: `${entity}.created`, id: ids[entity], bytes: await read(entity, ids[entity]) });
    }
    for (const entity of entities) {
      expect((await api.call("PATCH", `/api/v1/${entity}/${ids[entity]}`, bodies(clientId)[entity].update)).status).toBe(200);
      expected.push({ event: `${entity}.updated`, id: ids[entity], bytes: await read(entity, ids[entity]) });
    }
    // The client last: its invoices and quotes would refuse its delete.
    for (const entity of [...entities.slice(1), "client" as const]) {
      const before = await read(entity, ids[entity]);
      const deleted = await api.call("DELETE", `/api/v1/${entity}/${ids[entity]}`);
      expect(deleted.status).toBe(200);
      expect(dataBytes(deleted.text)).toBe(before);
      expected.push({ event: `${entity}.deleted`, id: ids[entity], bytes: before });
    }

    const delivered = await waitFor(() => (receiver.received.length >= expected.length ? receiver.received.map((r) => r.rawBody) : undefined), 30_000, 100);
    for (const { event, id, bytes } of expected) {
      const body = delivered.find((raw) => raw.includes(`"event":"${event}"`) && raw.includes(`"id":"${id}"`));
      expect({ event, bytes: body === undefined ? "no delivery" : dataBytes(body) }).toEqual({ event, bytes });
    }
  } finally {
    await receiver.close();
  }
}
