// Webhooks beyond the contract (extensions §E1.4-§E1.6), driven over HTTP through the gateway like a
// user would, in whichever run mode the caller started. Every answer is checked against the served
// OpenAPI document, and every delivery's signature over the raw bytes received.
import { createCrmClient } from "@crm/client";
import { verifyInterfaceSignature, waitFor, type ReceivedRequest } from "@crm/testing";
import Ajv from "ajv";
import addFormats from "ajv-formats";
import { ApiClient } from "./api-client";
import { startReceiver } from "./harness";
import { OpenApiResponseValidator } from "./openapi-validator";

type Receiver = Awaited<ReturnType<typeof startReceiver>>;

function bodiesOf(receiver: Receiver, secret: string): Array<Record<string, any>> {
  return receiver.received.map((r: ReceivedRequest) => {
    expect(verifyInterfaceSignature(secret, r.rawBody, r.headers["x-service-signature"] as string)).toBe(true);
    return JSON.parse(r.rawBody) as Record<string, any>;
  });
}

export async function runWebhookExtensionsFlow(baseUrl: string, suffix: string): Promise<void> {
  const doc = (await (await fetch(`${baseUrl}/api/v1/openapi.json`)).json()) as Record<string, unknown>;
  const api = new ApiClient(baseUrl, new OpenApiResponseValidator(doc));
  await api.signUp(`hooks-${suffix}`);
  const receiver = await startReceiver(200);
  try {
    const hook = await api.call("POST", "/api/v1/webhook", { url: receiver.url, events: ["client.created", "client.updated"] });
    expect(hook.status).toBe(201);
    const secret = hook.body.data.secret as string;

    // §E1.4: previousAttributes on updates, signed as sent, non-ASCII included.
    const client = (await api.call("POST", "/api/v1/client", { firstName: "Ada", lastName: "Lovelace" })).body.data;
    const updated = await api.call("PATCH", `/api/v1/client/${client.id}`, { lastName: "Lovelace-Byron ✓", notes: "Grüße 😀" });
    expect(updated.status).toBe(200);
    const bodies = await waitFor(() => (receiver.received.length >= 2 ? bodiesOf(receiver, secret) : undefined), 30_000, 100);
    const created = bodies.find((b) => b.event === "client.created");
    const update = bodies.find((b) => b.event === "client.updated");
    expect(created).not.toHaveProperty("previousAttributes");
    expect(update).toEqual({
      event: "client.updated",
      data: updated.body.data,
      previousAttributes: { lastName: "Lovelace", notes: null },
      businessId: client.businessId,
      timestamp: expect.any(String),
    });
    expect(receiver.received.some((r) => r.rawBody.includes('"notes":"Grüße 😀"'))).toBe(true);

    // §E1.5: a filter delivers the matching events only; both sides checked, and a bad filter is 400001.
    const refused = await api.call("POST", "/api/v1/webhook", { url: receiver.url, events: ["client.created", "invoice.created"], filter: "lastName:x" });
    expect([refused.status, refused.body.error.code, refused.body.error.details[0].path]).toEqual([400, 400001, "filter"]);
    const filteredReceiver = await startReceiver(200);
    try {
      const filtered = await api.call("POST", "/api/v1/webhook", {
        url: filteredReceiver.url,
        events: ["client.created"],
        filter: "lastName:startsWith:hop,NOT:email:endsWith:@spam.test",
      });
      expect([filtered.status, filtered.body.data.filter]).toEqual([201, "lastName:startsWith:hop,NOT:email:endsWith:@spam.test"]);
      const names: Array<[string, string | undefined]> = [
        ["Hopper", undefined],
        ["Turing", undefined],
        ["Hopkins", "x@spam.test"],
        ["HOPE", "h@example.test"],
      ];
      for (const [lastName, email] of names) {
        expect((await api.call("POST", "/api/v1/client", { firstName: "T", lastName, ...(email && { email }) })).status).toBe(201);
      }
      // The unfiltered webhook sees all four creations (so the pipeline ran), the filtered one two of them.
      await waitFor(() => receiver.received.filter((r) => r.rawBody.includes('"event":"client.created"')).length >= 5 || undefined, 30_000, 100);
      const matched = await waitFor(() => (filteredReceiver.received.length >= 2 ? bodiesOf(filteredReceiver, filtered.body.data.secret) : undefined), 30_000, 100);
      expect(matched.map((b) => b.data.lastName).sort()).toEqual(["HOPE", "Hopper"]);
      const log = await api.call("GET", `/api/v1/webhook/${filtered.body.data.id}/deliveries`);
      expect(log.body.meta.total).toBe(2);
      expect(filteredReceiver.received).toHaveLength(2);
    } finally {
      await filteredReceiver.close();
    }

    expect(api.undocumented).toEqual([]);
  } finally {
    await receiver.close();
  }
  await eventCatalogueFlow(baseUrl, suffix, doc);
}

/** §E1.6: the catalogue is public, and every real delivery body of all 28 events validates against its schema. */
async function eventCatalogueFlow(baseUrl: string, suffix: string, doc: Record<string, unknown>): Promise<void> {
  const anonymous = new ApiClient(baseUrl, new OpenApiResponseValidator(doc));
  const catalogue = await anonymous.call("GET", "/api/v1/event-types");
  expect(catalogue.status).toBe(200);
  const types = catalogue.body.data as Array<{ name: string; entity: string; action: string; description: string; schema: object }>;
  expect(types).toHaveLength(28);
  // The typed client knows the operation and its answer's shape.
  const typed = await createCrmClient({ baseUrl }).GET("/api/v1/event-types");
  expect(typed.data?.data.map((t) => t.name)).toEqual(types.map((t) => t.name));
  const refused = await anonymous.call("GET", "/api/v1/event-types", undefined, { origin: "null" });
  expect([refused.status, refused.body.error.code]).toEqual([403, 403000]);
  const ajv = new Ajv({ allErrors: true, strict: true });
  addFormats(ajv);
  const validators = new Map(types.map((t) => [t.name, ajv.compile(t.schema)]));

  const api = new ApiClient(baseUrl, new OpenApiResponseValidator(doc));
  await api.signUp(`catalogue-${suffix}`);
  const receiver = await startReceiver(200);
  try {
    const hook = await api.call("POST", "/api/v1/webhook", { url: receiver.url, events: types.map((t) => t.name) });
    expect(hook.status).toBe(201);
    const secret = hook.body.data.secret as string;
    const item = { description: "Arbeit ✓", quantity: 1.5, unitPrice: 10.25 };
    const client = (await api.call("POST", "/api/v1/client", { firstName: "Zoë", lastName: "Ørsted", email: "zoe@example.test" })).body.data;
    const bodies: Record<string, [object, object]> = {
      contact: [{ clientId: client.id, type: "EMAIL", value: "zoe@example.test" }, { isPrimary: true }],
      invoice: [
        { clientId: client.id, items: [item], dueDate: "2026-12-31" },
        { status: "PAID", items: [item, item] },
      ],
      quote: [{ clientId: client.id, items: [item] }, { status: "ACCEPTED" }],
      product: [{ name: "Widget", unitPrice: 9.99 }, { sku: "W-1" }],
      service: [{ name: "Consulting", unit: "hour" }, { unitPrice: 120 }],
      employee: [{ firstName: "Emmy", lastName: "Noether" }, { position: "Mathematician" }],
    };
    for (const [entity, [create, update]] of Object.entries(bodies)) {
      const created = await api.call("POST", `/api/v1/${entity}`, create);
      expect([entity, created.status]).toEqual([entity, 201]);
      expect((await api.call("PATCH", `/api/v1/${entity}/${created.body.data.id}`, update)).status).toBe(200);
      expect((await api.call("DELETE", `/api/v1/${entity}/${created.body.data.id}`)).status).toBe(200);
      // Back from the trash (extensions §E5), then gone again, so the client's own delete is not refused.
      expect((await api.call("POST", `/api/v1/${entity}/${created.body.data.id}/restore`)).status).toBe(200);
      expect((await api.call("DELETE", `/api/v1/${entity}/${created.body.data.id}`)).status).toBe(200);
    }
    expect((await api.call("PATCH", `/api/v1/client/${client.id}`, { notes: "n" })).status).toBe(200);
    expect((await api.call("DELETE", `/api/v1/client/${client.id}`)).status).toBe(200);
    expect((await api.call("POST", `/api/v1/client/${client.id}/restore`)).status).toBe(200);

    const received = await waitFor(() => (receiver.received.length >= 34 ? bodiesOf(receiver, secret) : undefined), 60_000, 200);
    expect(new Set(received.map((b) => b.event))).toEqual(new Set(types.map((t) => t.name)));
    for (const body of received) {
      const validate = validators.get(body.event)!;
      expect([body.event, validate(body), validate.errors ?? null]).toEqual([body.event, true, null]);
      // ... and a body that is not what the event sends does not validate.
      expect(validate({ ...body, data: { ...body.data, surprise: 1 } })).toBe(false);
    }
    expect(api.undocumented).toEqual([]);
    expect(anonymous.undocumented).toEqual([]);
  } finally {
    await receiver.close();
  }
}
