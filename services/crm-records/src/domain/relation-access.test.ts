import { isAppError } from "@crm/errors";
import { entityDefinitions } from "../entities";
import { readableRelations } from "./relation-access";

const client = entityDefinitions.client;
const contact = entityDefinitions.contact;

function outcome(run: () => readonly string[]): readonly string[] | number {
  try {
    return run();
  } catch (err) {
    if (isAppError(err)) return err.code;
    throw err;
  }
}

describe("readableRelations (extensions §E10)", () => {
  it.each([
    // [permissions, include as written, what include resolved to, expected relations or error code]
    [["clients.read", "contacts.read", "invoices.read"], undefined, ["contacts"], ["contacts"]],
    [["clients.read"], undefined, ["contacts"], []],
    [["clients.read"], "-contacts", [], []],
    [["clients.read"], "invoices", ["contacts", "invoices"], 401014],
    [["clients.read"], "contacts", ["contacts"], 401014],
    [["clients.read"], "-contacts,contacts", ["contacts"], 401014],
    [["clients.read", "invoices.read"], "invoices", ["contacts", "invoices"], ["invoices"]],
    [["clients.read", "invoices.read", "quotes.read"], "quotes,invoices", ["contacts", "quotes", "invoices"], ["quotes", "invoices"]],
    [["clients.read", "contacts.read"], "quotes", ["contacts", "quotes"], 401014],
  ] as const)("%j reading clients with include=%s", (permissions, include, resolved, expected) => {
    expect(outcome(() => readableRelations(client, resolved, include, { permissions }))).toEqual(expected);
  });

  it("a contact's client needs clients.read when named; it is no default", () => {
    expect(outcome(() => readableRelations(contact, ["client"], "client", { permissions: ["contacts.read"] }))).toBe(401014);
    expect(readableRelations(contact, ["client"], "client", { permissions: ["contacts.read", "clients.read"] })).toEqual(["client"]);
    expect(readableRelations(contact, [], undefined, { permissions: ["contacts.read"] })).toEqual([]);
  });

  it("hands back the same array when everything is readable (no allocation on the hot path)", () => {
    const resolved = ["contacts"];
    expect(readableRelations(client, resolved, undefined, { permissions: ["clients.read", "contacts.read"] })).toBe(resolved);
  });
});
