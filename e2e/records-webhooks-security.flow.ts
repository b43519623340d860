// Issue 35 items 1, 7, 8 and 12 through the gateway, with real API keys, in whichever run mode the
// caller started: include obeys the key's scopes (extensions §E10), so does what a webhook may
// subscribe to; a recovery answers how much it left; cursors and the delivery log give nothing away.
// Every answer is checked against the served OpenAPI document.
import { waitFor } from "@crm/testing";
import { ApiClient } from "./api-client";
import { OpenApiResponseValidator } from "./openapi-validator";

const REFUSED = { code: 401014, message: "Insufficient permissions for this action" };

export async function runRecordsAndWebhooksSecurityFlow(baseUrl: string, suffix: string): Promise<void> {
  const doc = (await (await fetch(`${baseUrl}/api/v1/openapi.json`)).json()) as Record<string, unknown>;
  const validator = new OpenApiResponseValidator(doc);
  const owner = new ApiClient(baseUrl, validator);
  const callers = [owner];
  await owner.signUp(`security-${suffix}`);
  const keyWith = async (...scopes: string[]): Promise<ApiClient> => {
    const created = await owner.call("POST", "/api/v1/api-key", { name: scopes.join(" "), scopes });
    expect(created.status).toBe(201);
    const client = new ApiClient(baseUrl, validator);
    client.apiKey = created.body.data.key as string;
    callers.push(client);
    return client;
  };
  const outcome = (res: { status: number; body: any }) => [res.status, res.body?.error];

  // Two clients (both with an email, so a cursor would hold one), a contact and an invoice.
  const ids: string[] = [];
  for (const [firstName, email] of [
    ["Ada", `ada-${suffix}@example.test`],
    ["Grace", `grace-${suffix}@example.test`],
  ]) {
    const client = await owner.call("POST", "/api/v1/client", { firstName, lastName: "Secure", email });
    expect(client.status).toBe(201);
    ids.push(client.body.data.id as string);
  }
  const [clientId] = ids as [string];
  expect((await owner.call("POST", "/api/v1/contact", { clientId, type: "EMAIL", value: `c-${suffix}@example.test` })).status).toBe(201);
  expect((await owner.call("POST", "/api/v1/invoice", { clientId, items: [{ description: "Work", quantity: 1, unitPrice: 100 }] })).status).toBe(201);

  // Item 1: a clients.read key reads clients, never invoices or contacts through include.
  const clientsOnly = await keyWith("clients.read");
  expect(outcome(await clientsOnly.call("GET", "/api/v1/invoice"))).toEqual([401, REFUSED]);
  expect(outcome(await clientsOnly.call("GET", "/api/v1/client?include=invoices"))).toEqual([401, REFUSED]);
  expect(outcome(await clientsOnly.call("GET", `/api/v1/client/${clientId}?include=invoices`))).toEqual([401, REFUSED]);
  expect(outcome(await clientsOnly.call("GET", "/api/v1/client?include=contacts"))).toEqual([401, REFUSED]);
  const list = await clientsOnly.call("GET", "/api/v1/client?perPage=1");
  expect(list.status).toBe(200);
  // The default contacts are left out, not refused.
  expect(list.body.data[0]).not.toHaveProperty("contacts");
  const one = await clientsOnly.call("GET", `/api/v1/client/${clientId}`);
  expect([one.status, "contacts" in one.body.data]).toEqual([200, false]);
  const cursor = encodeURIComponent(list.body.meta.nextCursor as string);
  expect(outcome(await clientsOnly.call("GET", `/api/v1/client?cursor=${cursor}&include=invoices`))).toEqual([401, REFUSED]);
  const next = await clientsOnly.call("GET", `/api/v1/client?cursor=${cursor}`);
  expect([next.status, next.body.data.length, "contacts" in next.body.data[0]]).toEqual([200, 1, false]);
  // The reverse: a contacts.read key and the contact's client.
  const contactsOnly = await keyWith("contacts.read");
  expect(outcome(await contactsOnly.call("GET", "/api/v1/contact?include=client"))).toEqual([401, REFUSED]);
  expect((await contactsOnly.call("GET", "/api/v1/contact")).status).toBe(200);
  // Holding both reads, the relation is there, and an owner keeps decisions §8: include=invoices keeps contacts.
  const both = await keyWith("clients.read", "invoices.read");
  const withInvoices = await both.call("GET", `/api/v1/client/${clientId}?include=invoices`);
  expect([withInvoices.status, withInvoices.body.data.invoices.length, "contacts" in withInvoices.body.data]).toEqual([200, 1, false]);
  const full = await owner.call("GET", `/api/v1/client/${clientId}?include=invoices`);
  expect([full.body.data.invoices.length, full.body.data.contacts.length]).toEqual([1, 1]);

  // Item 12: a cursor holds the last row's email and the query, and shows neither.
  const byEmail = await owner.call("GET", "/api/v1/client?perPage=1&orderBy=email:asc&where=lastName:Secure");
  const sealed: string = byEmail.body.meta.nextCursor;
  for (const text of [sealed, Buffer.from(sealed, "base64url").toString("latin1")]) {
    expect([text.includes(`ada-${suffix}`), text.includes("Secure"), text.includes("email:asc")]).toEqual([false, false, false]);
  }
  expect((await owner.call("GET", `/api/v1/client?cursor=${encodeURIComponent(sealed)}`)).body.data[0].email).toBe(`grace-${suffix}@example.test`);

  // Item 7: subscribing needs reading what is sent.
  const hookOnly = await keyWith("webhooks.create");
  const url = "https://receiver.example.test/hook";
  expect(outcome(await hookOnly.call("POST", "/api/v1/webhook", { url, events: ["client.created"] }))).toEqual([401, REFUSED]);
  const hookAndClients = await keyWith("webhooks.create", "clients.read");
  expect((await hookAndClients.call("POST", "/api/v1/webhook", { url, events: ["client.created", "client.updated"] })).status).toBe(201);
  expect(outcome(await hookAndClients.call("POST", "/api/v1/webhook", { url, events: ["client.created", "invoice.created"] }))).toEqual([401, REFUSED]);
  const ownersHook = (await owner.call("POST", "/api/v1/webhook", { url, events: ["invoice.created"] })).body.data;
  const updater = await keyWith("webhooks.update", "clients.read");
  expect(outcome(await updater.call("PUT", `/api/v1/webhook/${ownersHook.id}`, { url: "https://elsewhere.example.test/" }))).toEqual([401, REFUSED]);
  expect((await updater.call("PUT", `/api/v1/webhook/${ownersHook.id}`, { description: "renamed" })).status).toBe(200);

  // Item 12: a name that does not resolve is one generic reason in the delivery log.
  const unresolvable = await owner.call("POST", "/api/v1/webhook", {
    url: `http://no-such-host-${suffix.toLowerCase().replace(/[^a-z0-9-]/g, "")}.invalid/hook`,
    events: ["client.updated"],
  });
  expect(unresolvable.status).toBe(201);
  expect((await owner.call("PATCH", `/api/v1/client/${clientId}`, { notes: "wake the webhook" })).status).toBe(200);
  const delivery = await waitFor(
    async () => {
      const log = await owner.call("GET", `/api/v1/webhook/${unresolvable.body.data.id}/deliveries`);
      const first = log.body.data[0];
      return first?.attempt === 1 ? first : undefined;
    },
    30_000,
    100,
  );
  expect(delivery).toMatchObject({ responseStatus: 0, responseBody: "Target address is not allowed or could not be resolved" });

  // Item 8: a recovery says how many it left for the next call.
  const recovered = await owner.call("POST", `/api/v1/webhook/${unresolvable.body.data.id}/recover`, { since: new Date(Date.now() - 3_600_000).toISOString() });
  expect([recovered.status, recovered.body.data]).toEqual([202, { recovered: 0, remaining: 0 }]);

  expect(callers.flatMap((caller) => caller.undocumented)).toEqual([]);
}
