import { eventCatalogue } from "@crm/contracts";
import { isAppError } from "@crm/errors";
import { requireReadableEvents } from "./subscription-permission";

function code(events: readonly string[], permissions: readonly string[]): number | "allowed" {
  try {
    requireReadableEvents(events, { permissions });
    return "allowed";
  } catch (err) {
    if (isAppError(err)) return err.code;
    throw err;
  }
}

describe("requireReadableEvents (extensions §E10)", () => {
  it.each([
    [["client.created"], ["webhooks.create", "clients.read"], "allowed"],
    [["client.created"], ["webhooks.create"], 401014],
    [["invoice.updated", "client.created"], ["webhooks.create", "clients.read"], 401014],
    [["invoice.updated", "client.created"], ["clients.read", "invoices.read"], "allowed"],
    [["contact.deleted"], ["clients.read"], 401014],
    [["webhook.test"], ["webhooks.create", "clients.read"], 401014],
  ] as const)("%j with %j", (events, permissions, expected) => {
    expect(code(events, permissions)).toBe(expected);
  });

  it("every event of the catalogue needs exactly its entity's read", () => {
    for (const event of eventCatalogue) {
      const resource = `${event.split(".")[0]}s.read`;
      expect([event, code([event], [resource]), code([event], [])]).toEqual([event, "allowed", 401014]);
    }
  });
});
