// Webhooks beyond the contract (extensions §E1.4-§E1.6), driven over HTTP through the gateway like a
// user would, in whichever run mode the caller started. Every answer is checked against the served
// OpenAPI document, and every delivery's signature over the raw bytes received.
import { waitFor } from "@crm/testing";
import { ApiClient } from "./api-client";
import { verifyInterfaceSignature } from "./flow";
import { startReceiver, type ReceivedRequest } from "./harness";
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

    expect(api.undocumented).toEqual([]);
  } finally {
    await receiver.close();
  }
}
