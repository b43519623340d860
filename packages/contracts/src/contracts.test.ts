import { allPermissions, eventCatalogue, eventEnvelopeSchema, isUuid, rolePermissions, uuidv7 } from "./index";

describe("catalogues", () => {
  it("has 28 event names of the form entity.action", () => {
    expect(eventCatalogue).toHaveLength(28);
    expect(eventCatalogue).toContain("client.created");
    expect(eventCatalogue).toContain("contact.deleted");
  });

  it("gives roles the permissions of decisions §4", () => {
    expect(rolePermissions.OWNER).toEqual(allPermissions);
    expect(rolePermissions.MEMBER).toContain("invoices.delete");
    expect(rolePermissions.MEMBER).toContain("webhooks.read");
    expect(rolePermissions.MEMBER).not.toContain("webhooks.create");
    expect(rolePermissions.MEMBER).not.toContain("apiKeys.create");
    expect(rolePermissions.VIEWER).toEqual(expect.arrayContaining(["clients.read", "employees.read"]));
    expect(rolePermissions.VIEWER.every((p) => p.endsWith(".read"))).toBe(true);
    expect(rolePermissions.VIEWER).toHaveLength(7);
  });
});

describe("uuidv7", () => {
  it("is a valid, time-ordered UUID", () => {
    const a = uuidv7(1_000);
    const b = uuidv7(2_000);
    expect(isUuid(a)).toBe(true);
    expect(a[14]).toBe("7");
    expect(a < b).toBe(true);
  });

  it("stays unique and well-formed across many refills of its random pool", () => {
    const ids = Array.from({ length: 2_000 }, () => uuidv7(5_000));
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of ids) {
      expect(id.startsWith("00000000-1388-7")).toBe(true);
      expect("89ab").toContain(id[19]);
    }
  });
});

// Services of neighbouring releases share the bus (issue 38): a field a newer producer adds is ignored by an
// older consumer (expand), and only an incompatible change bumps `version`, which a consumer refuses.
describe("the event envelope across releases", () => {
  const envelope = { id: uuidv7(), type: "client.created", businessId: uuidv7(), occurredAt: new Date().toISOString(), version: 1, data: { id: "x" } };

  it("reads an envelope with fields it does not know, and leaves them out", () => {
    const parsed = eventEnvelopeSchema.safeParse({ ...envelope, addedLater: { any: "shape" } });
    expect(parsed.success && parsed.data).toEqual(envelope);
  });

  it("refuses an envelope of another version", () => {
    expect(eventEnvelopeSchema.safeParse({ ...envelope, version: 2 }).success).toBe(false);
  });
});
