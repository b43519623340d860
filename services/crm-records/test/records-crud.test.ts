// Every entity through the HTTP app: create/get/list/update/delete, required fields, enums,
// unknown and read-only fields, permissions; on PGlite and on PostgreSQL.
import { isUuid, readOnlyRecordFields, type RecordEntity } from "@crm/contracts";
import { describePostgres } from "@crm/testing";
import { createClient, sharedHarness, type Caller, type Mode } from "./harness";

interface EntityCase {
  entity: RecordEntity;
  create: (clientId: string) => Record<string, unknown>;
  /** Fields the response must carry after create, defaults included. */
  expected: (clientId: string) => Record<string, unknown>;
  update: Record<string, unknown>;
  required: string[];
  invalid: Array<[Record<string, unknown>, string]>;
}

const item = { description: "Work", quantity: 2, unitPrice: 10.5 };

const cases: EntityCase[] = [
  {
    entity: "client",
    create: () => ({ firstName: "Ada", lastName: "Lovelace", email: "ada@example.com", phone: "+44 1", companyName: "Engines Ltd" }),
    expected: () => ({ firstName: "Ada", lastName: "Lovelace", email: "ada@example.com", phone: "+44 1", companyName: "Engines Ltd", notes: null, isActive: true }),
    update: { lastName: "King", isActive: false, notes: "VIP" },
    required: ["firstName", "lastName"],
    invalid: [
      [{ email: "not-an-email" }, "email"],
      [{ isActive: "yes" }, "isActive"],
      [{ firstName: 42 }, "firstName"],
    ],
  },
  {
    entity: "contact",
    create: (clientId) => ({ clientId, type: "EMAIL", value: "ada@example.com" }),
    expected: (clientId) => ({ clientId, type: "EMAIL", value: "ada@example.com", isPrimary: false }),
    update: { type: "PHONE", value: "+1 555", isPrimary: true },
    required: ["clientId", "type", "value"],
    invalid: [[{ type: "FAX" }, "type"]],
  },
  {
    entity: "invoice",
    create: (clientId) => ({ clientId, items: [item], dueDate: "2025-02-01" }),
    expected: (clientId) => ({
      clientId,
      number: "INV-000001",
      status: "DRAFT",
      currency: "USD",
      items: [item],
      totalAmount: 21,
      issueDate: null,
      dueDate: "2025-02-01T00:00:00.000Z",
      notes: null,
    }),
    update: { status: "PAID", currency: "EUR", items: [{ description: "More", quantity: 3, unitPrice: 1.1 }] },
    required: ["clientId", "items"],
    invalid: [
      [{ status: "PAYED" }, "status"],
      [{ currency: "usd" }, "currency"],
      [{ issueDate: "31/01/2025" }, "issueDate"],
      [{ items: [] }, "items"],
      [{ items: [{ description: "x", quantity: 0, unitPrice: 1 }] }, "items.0.quantity"],
      [{ items: [{ description: "x", quantity: 1, unitPrice: -1 }] }, "items.0.unitPrice"],
      [{ items: [{ description: "x", quantity: 1.00001, unitPrice: 1 }] }, "items.0.quantity"],
      [{ items: [{ description: "x", quantity: 1, unitPrice: 0.12345 }] }, "items.0.unitPrice"],
      [{ items: [{ description: "x", quantity: 1, unitPrice: 1, extra: 1 }] }, "items.0.extra"],
    ],
  },
  {
    entity: "quote",
    create: (clientId) => ({ clientId, items: [item], validUntil: "2025-03-01T12:00:00Z", currency: "GBP" }),
    expected: (clientId) => ({
      clientId,
      number: "QUO-000001",
      status: "DRAFT",
      currency: "GBP",
      items: [item],
      totalAmount: 21,
      validUntil: "2025-03-01T12:00:00.000Z",
    }),
    update: { status: "ACCEPTED" },
    required: ["clientId", "items"],
    invalid: [
      [{ status: "PAID" }, "status"],
      [{ validUntil: "tomorrow" }, "validUntil"],
    ],
  },
  {
    entity: "product",
    create: () => ({ name: "Widget", sku: "W-1", unitPrice: 9.99 }),
    expected: () => ({ name: "Widget", sku: "W-1", unitPrice: 9.99, currency: "USD", isActive: true, description: null }),
    update: { unitPrice: 12.5, isActive: false, description: "Blue" },
    required: ["name"],
    invalid: [
      [{ currency: "EURO" }, "currency"],
      [{ unitPrice: -1 }, "unitPrice"],
      [{ unitPrice: 1.00001 }, "unitPrice"],
    ],
  },
  {
    entity: "service",
    create: () => ({ name: "Consulting", unit: "hour" }),
    expected: () => ({ name: "Consulting", unit: "hour", unitPrice: 0, isActive: true, description: null }),
    update: { unitPrice: 120, name: "Advice" },
    required: ["name"],
    invalid: [[{ unitPrice: "120" }, "unitPrice"]],
  },
  {
    entity: "employee",
    create: () => ({ firstName: "Grace", lastName: "Hopper", position: "Admiral" }),
    expected: () => ({ firstName: "Grace", lastName: "Hopper", position: "Admiral", email: null, phone: null, isActive: true }),
    update: { email: "grace@example.com", position: null },
    required: ["firstName", "lastName"],
    invalid: [[{ email: "grace@" }, "email"]],
  },
];

function paths(res: { body: { error?: { details?: Array<{ path: string }> } } }): string[] {
  return (res.body.error?.details ?? []).map((d) => d.path);
}

function crudSuite(mode: Mode) {
  const h = sharedHarness(mode);
  let caller: Caller;
  let clientId: string;

  beforeAll(async () => {
    caller = h.caller();
    clientId = await createClient(caller);
  });

  describe.each(cases)("$entity", (c) => {
    it("creates (201), gets, lists, updates with PATCH and PUT, deletes (200, the record as it was)", async () => {
      const created = await caller.post(`/${c.entity}`, c.create(clientId)).expect(201);
      expect(created.body.success).toBe(true);
      const record = created.body.data;
      expect(record).toMatchObject(c.expected(clientId));
      expect(isUuid(record.id)).toBe(true);
      expect(record.id[14]).toBe("7");
      expect(record.businessId).toBe(caller.businessId);
      expect(new Date(record.createdAt).toISOString()).toBe(record.createdAt);
      expect(new Date(record.updatedAt).toISOString()).toBe(record.updatedAt);

      const got = await caller.get(`/${c.entity}/${record.id}`).expect(200);
      expect(got.body).toEqual({ success: true, data: expect.objectContaining(record) });

      const list = await caller.get(`/${c.entity}`).expect(200);
      expect(list.body.success).toBe(true);
      expect(list.body.data.map((r: { id: string }) => r.id)).toContain(record.id);
      expect(list.body.meta).toMatchObject({ currentPage: 1, perPage: 10, prev: null });

      const patched = await caller.patch(`/${c.entity}/${record.id}`, c.update).expect(200);
      const expectedUpdate: Record<string, unknown> = { ...c.update };
      if (c.update["items"]) expectedUpdate["totalAmount"] = 3.3;
      expect(patched.body.data).toMatchObject({ ...expectedUpdate, id: record.id, createdAt: record.createdAt });
      expect(patched.body.data.updatedAt >= record.updatedAt).toBe(true);

      const put = await caller.put(`/${c.entity}/${record.id}`, {}).expect(200);
      expect(put.body.data).toMatchObject(expectedUpdate);

      const before = (await caller.get(`/${c.entity}/${record.id}${c.entity === "client" ? "?include=-contacts" : ""}`).expect(200)).body.data;
      const deleted = await caller.delete(`/${c.entity}/${record.id}`).expect(200);
      expect(deleted.body).toEqual({ success: true, data: before });
      const gone = await caller.get(`/${c.entity}/${record.id}`).expect(404);
      expect(gone.body).toEqual({ success: false, error: { code: 404001, message: "Resource not found" } });
    });

    it.each(c.required)("requires %s (400001 naming it)", async (field) => {
      const body = c.create(clientId);
      delete body[field];
      const res = await caller.post(`/${c.entity}`, body).expect(400);
      expect(res.body.error).toMatchObject({ code: 400001, message: "Validation failed" });
      expect(paths(res)).toContain(field);
    });

    it("rejects invalid values, enums included (400001 naming the field)", async () => {
      for (const [patch, path] of c.invalid) {
        const res = await caller.post(`/${c.entity}`, { ...c.create(clientId), ...patch });
        expect([res.status, res.body.error?.code, paths(res)]).toEqual([400, 400001, [path]]);
      }
    });

    it("rejects unknown fields and read-only fields on create and update", async () => {
      const unknown = await caller.post(`/${c.entity}`, { ...c.create(clientId), nickname: "x" }).expect(400);
      expect(unknown.body.error.code).toBe(400001);
      expect(paths(unknown)).toEqual(["nickname"]);
      const existing = (await caller.post(`/${c.entity}`, c.create(clientId)).expect(201)).body.data;
      for (const field of readOnlyRecordFields) {
        const value = field === "totalAmount" ? 1 : field.endsWith("At") ? new Date().toISOString() : (existing[field] ?? "x");
        const onCreate = await caller.post(`/${c.entity}`, { ...c.create(clientId), [field]: value }).expect(400);
        expect([onCreate.body.error.code, paths(onCreate)]).toEqual([400001, [field]]);
        const onUpdate = await caller.patch(`/${c.entity}/${existing.id}`, { [field]: value }).expect(400);
        expect([onUpdate.body.error.code, paths(onUpdate)]).toEqual([400001, [field]]);
      }
      const after = await caller.get(`/${c.entity}/${existing.id}${c.entity === "client" ? "?include=-contacts" : ""}`).expect(200);
      expect(after.body.data).toEqual(existing);
    });

    it("answers 404001 for an id that is not a UUID and for an unknown one", async () => {
      for (const id of ["not-a-uuid", "123", "0193a0c4-0000-7000-8000-000000000000"]) {
        for (const res of [
          await caller.get(`/${c.entity}/${id}`),
          await caller.patch(`/${c.entity}/${id}`, c.update),
          await caller.put(`/${c.entity}/${id}`, c.update),
          await caller.delete(`/${c.entity}/${id}`),
        ]) {
          expect([res.status, res.body]).toEqual([404, { success: false, error: { code: 404001, message: "Resource not found" } }]);
        }
      }
    });
  });

  describe("references, dependents and permissions", () => {
    it("refuses a clientId that does not name a client (400001 at clientId)", async () => {
      for (const bad of ["nope", "0193a0c4-0000-7000-8000-000000000000", 7]) {
        const res = await caller.post("/invoice", { clientId: bad, items: [item] }).expect(400);
        expect(res.body.error.code).toBe(400001);
        expect(res.body.error.details[0].path).toBe("clientId");
      }
    });

    it("deletes a client's contacts with it, each as a contact.deleted event", async () => {
      const id = await createClient(caller, { firstName: "Cascade" });
      const contact = (await caller.post("/contact", { clientId: id, type: "PHONE", value: "1" }).expect(201)).body.data;
      const withContacts = await caller.get(`/client/${id}`).expect(200);
      expect(withContacts.body.data.contacts).toEqual([contact]);
      const deleted = await caller.delete(`/client/${id}`).expect(200);
      expect(deleted.body.data.contacts).toBeUndefined();
      await caller.get(`/contact/${contact.id}`).expect(404);
      const events = await h.prisma.outboxEvent.findMany({ where: { key: caller.businessId }, orderBy: { sequence: "asc" } });
      const tail = events.slice(-2).map((e) => e.payload as { type: string; data: { id: string } });
      expect(tail.map((e) => [e.type, e.data.id])).toEqual([
        ["contact.deleted", contact.id],
        ["client.deleted", id],
      ]);
    });

    it("refuses to delete a client with invoices or quotes (409003) and keeps everything", async () => {
      for (const entity of ["invoice", "quote"] as const) {
        const id = await createClient(caller);
        await caller.post("/contact", { clientId: id, type: "EMAIL", value: "x@example.com" }).expect(201);
        await caller.post(`/${entity}`, { clientId: id, items: [item] }).expect(201);
        const res = await caller.delete(`/client/${id}`).expect(409);
        expect(res.body).toEqual({ success: false, error: { code: 409003, message: "Resource has dependent records" } });
        const still = await caller.get(`/client/${id}`).expect(200);
        expect(still.body.data.contacts).toHaveLength(1);
      }
    });

    it("checks the permission of each action (401014)", async () => {
      const reader = h.caller({ businessId: caller.businessId, permissions: ["clients.read", "invoices.read"] });
      const res = await reader.post("/invoice", { clientId, items: [item] }).expect(401);
      expect(res.body).toEqual({ success: false, error: { code: 401014, message: "Insufficient permissions for this action" } });
      await reader.get("/invoice").expect(200);
      await reader.get(`/client/${clientId}`).expect(200);
      expect((await reader.patch(`/client/${clientId}`, { notes: "x" })).body.error.code).toBe(401014);
      expect((await reader.delete(`/client/${clientId}`)).body.error.code).toBe(401014);
      expect((await reader.get("/product")).body.error.code).toBe(401014);
    });

    it("needs a valid internal token (401000) and answers unknown routes with 404000", async () => {
      const request = (await import("supertest")).default;
      const res = await request(h.app).get("/api/v1/client").expect(401);
      expect(res.body.error.code).toBe(401000);
      const unknown = await caller.get("/widget").expect(404);
      expect(unknown.body.error.code).toBe(404000);
    });

    it("accepts an empty PATCH as a no-op update, and nulls for optional fields", async () => {
      const id = await createClient(caller, { email: "a@example.com" });
      const res = await caller.patch(`/client/${id}`, { email: null, phone: null }).expect(200);
      expect(res.body.data).toMatchObject({ email: null, phone: null, firstName: "Ada" });
      const nullRequired = await caller.patch(`/client/${id}`, { firstName: null }).expect(400);
      expect(paths(nullRequired)).toEqual(["firstName"]);
      const notObject = await caller.post("/client", [1, 2]).expect(400);
      expect(notObject.body.error.code).toBe(400001);
    });
  });
}

describe("records CRUD on PGlite", () => crudSuite("pglite"));
describePostgres("records CRUD on PostgreSQL", () => crudSuite("postgres"));
