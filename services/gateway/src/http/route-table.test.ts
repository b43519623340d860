import { matchRoute, pathExists } from "./route-table";

describe("route table", () => {
  it.each([
    ["GET", "/api/v1/client", "crm-records", "clients.read"],
    ["POST", "/api/v1/invoice", "crm-records", "invoices.create"],
    ["PATCH", "/api/v1/quote/abc", "crm-records", "quotes.update"],
    ["PUT", "/api/v1/employee/abc", "crm-records", "employees.update"],
    ["DELETE", "/api/v1/contact/abc", "crm-records", "contacts.delete"],
    ["GET", "/api/v1/webhook/abc/deliveries", "webhook-delivery", "webhooks.read"],
    ["POST", "/api/v1/webhook/abc/deliveries/def/retry", "webhook-delivery", "webhooks.update"],
    ["POST", "/api/v1/webhook/abc/recover", "webhook-delivery", "webhooks.update"],
    ["POST", "/api/v1/api-key", "identity", "apiKeys.create"],
    ["DELETE", "/api/v1/api-key", "identity", "apiKeys.delete"],
    ["GET", "/api/v1/user/abc", "identity", "users.read"],
    // Extensions §E4: the literal segment is never a record id; definitions are written by administrators.
    ["GET", "/api/v1/client/fields", "crm-records", "clients.read"],
    ["GET", "/api/v1/invoice/fields/externalId", "crm-records", "invoices.read"],
    ["POST", "/api/v1/product/fields", "crm-records", "users.update"],
    ["PATCH", "/api/v1/client/fields/externalId", "crm-records", "users.update"],
    ["DELETE", "/api/v1/client/fields/externalId", "crm-records", "users.update"],
    ["DELETE", "/api/v1/client/abc", "crm-records", "clients.delete"],
  ])("%s %s -> %s needing %s", (method, path, service, permission) => {
    expect(matchRoute(method, path)).toMatchObject({ service, permission, public: false });
  });

  it("marks public routes and API-key-refused routes", () => {
    expect(matchRoute("POST", "/api/v1/auth/sign-in")).toMatchObject({ public: true, service: "identity" });
    expect(matchRoute("GET", "/api/v1/capabilities")).toMatchObject({ public: true, service: "gateway" });
    expect(matchRoute("GET", "/api/v1/event-types")).toMatchObject({ public: true, service: "gateway" });
    expect(matchRoute("POST", "/api/v1/api-key")?.jwtOnly).toBe(true);
    expect(matchRoute("POST", "/api/v1/auth/logout")).toMatchObject({ public: false });
    expect(matchRoute("POST", "/api/v1/auth/logout")?.permission).toBeUndefined();
  });

  it("carries what the forwarder needs of a route: the change feed's wait, and which creates claim their Idempotency-Key", () => {
    // The forwarder reads these from the match: without them a feed wait of 30 s met the 30 s upstream
    // time-out and the capped pools (the change feed's first version).
    expect(matchRoute("GET", "/api/v1/events")?.waitsUpToMs).toBeGreaterThanOrEqual(30_000);
    expect(matchRoute("GET", "/api/v1/client")?.waitsUpToMs).toBeUndefined();
    expect(matchRoute("POST", "/api/v1/client")?.keyClaimedByService).toBe(true);
    expect(matchRoute("POST", "/api/v1/invoice/batch")?.keyClaimedByService).toBe(true);
    expect(matchRoute("POST", "/api/v1/webhook")?.keyClaimedByService).toBeUndefined();
    expect(matchRoute("POST", "/api/v1/api-key")?.keyClaimedByService).toBeUndefined();
  });

  it("finds nothing for unknown paths, methods and prefixes", () => {
    expect(matchRoute("GET", "/api/v1/unknown")).toBeUndefined();
    expect(matchRoute("DELETE", "/api/v1/client")).toBeUndefined();
    expect(matchRoute("GET", "/api/v2/client")).toBeUndefined();
    expect(matchRoute("GET", "/api/v1/client/a/b")).toBeUndefined();
    expect(matchRoute("PUT", "/api/v1/client/fields/key")).toBeUndefined();
    expect(pathExists("/api/v1/client/abc")).toBe(true);
    expect(pathExists("/api/v1/nope")).toBe(false);
  });

  it("offers PUT, not PATCH, for a webhook (interface: PUT /api/v1/webhook/{id}; webhook-delivery serves no PATCH)", () => {
    expect(matchRoute("PUT", "/api/v1/webhook/abc")).toMatchObject({ service: "webhook-delivery", permission: "webhooks.update" });
    expect(matchRoute("PATCH", "/api/v1/webhook/abc")).toBeUndefined();
  });
});
