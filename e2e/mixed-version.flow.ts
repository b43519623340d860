// What every pair of neighbouring releases must keep doing together (issue 38 item 2): sign-up,
// an API key, records written with it, a list with `where` and `include`, and a signed webhook for
// each created record. Plain HTTP, no typed client and no OpenAPI check: either side may be the
// previous release, whose document and client differ from this checkout's.
import { verifyInterfaceSignature, waitFor } from "@crm/testing";
import { ApiClient } from "./api-client";
import { startReceiver } from "./harness";

export async function runMixedVersionFlow(baseUrl: string, suffix: string): Promise<void> {
  const owner = new ApiClient(baseUrl);
  const signUp = await owner.call("POST", "/api/v1/auth/sign-up", {
    businessName: `Mixed ${suffix}`,
    email: `mixed-${suffix}@example.test`,
    password: "correct-horse-battery",
  });
  expect(signUp.status).toBe(201);
  owner.accessToken = signUp.body.data.accessToken;
  const businessId: string = signUp.body.data.business.id;

  const receiver = await startReceiver(200);
  try {
    const hook = await owner.call("POST", "/api/v1/webhook", { url: receiver.url, events: ["client.created", "contact.created"], description: "mixed versions" });
    expect(hook.status).toBe(201);
    const secret: string = hook.body.data.secret;

    const created = await owner.call("POST", "/api/v1/api-key", { name: "partner", scopes: ["clients.read", "clients.create", "contacts.read", "contacts.create"] });
    expect(created.status).toBe(201);
    const partner = new ApiClient(baseUrl);
    partner.apiKey = created.body.data.key;

    const clients: string[] = [];
    for (const lastName of ["Lovelace", "Hopper"]) {
      const client = await partner.call("POST", "/api/v1/client", { firstName: "Ada", lastName }, { "idempotency-key": `${suffix}-${lastName}` });
      expect(client.status).toBe(201);
      clients.push(client.body.data.id);
    }
    const contact = await partner.call("POST", "/api/v1/contact", { clientId: clients[0], type: "EMAIL", value: "ada@example.test" });
    expect(contact.status).toBe(201);

    const list = await partner.call("GET", "/api/v1/client?where=lastName:Lovelace&include=contacts&perPage=10");
    expect(list.status).toBe(200);
    expect(list.body.data.map((c: { id: string }) => c.id)).toEqual([clients[0]]);
    expect(list.body.data[0].contacts.map((c: { id: string }) => c.id)).toEqual([contact.body.data.id]);
    expect(list.body.meta).toMatchObject({ total: 1 });

    // A scoped key still cannot do what it was not given (extensions §E10).
    expect((await partner.call("GET", "/api/v1/invoice")).status).toBe(401);

    // One signed delivery per created record, each naming its event and record.
    const deliveries = await waitFor(() => (receiver.received.length >= 3 ? receiver.received : undefined), 30_000, 100);
    const seen = deliveries.map((request) => {
      expect(verifyInterfaceSignature(secret, request.rawBody, request.headers["x-service-signature"] as string)).toBe(true);
      const payload = JSON.parse(request.rawBody) as { event: string; businessId: string; data: { id: string } };
      expect(payload.businessId).toBe(businessId);
      return `${payload.event} ${payload.data.id}`;
    });
    expect(seen.sort()).toEqual([...clients.map((id) => `client.created ${id}`), `contact.created ${contact.body.data.id}`].sort());
  } finally {
    await receiver.close();
  }
}
