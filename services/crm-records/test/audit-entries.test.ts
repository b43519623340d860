// The audit entries crm-records writes (extensions §E7): in the same statement or transaction as the
// change, so a change whose entry cannot be written does not happen either, on both create paths; the
// entries of a history as the API shows them; custom field definitions' `field.*` entries, also as the
// gateway's log reads them; retention by AUDIT_RETENTION_DAYS on a moved clock.
import { type AuditChange, type AuditContext, type AuditRow, auditRetentionRule, AuditWriter, INTERNAL_AUDIT_LOG_PATH, SYSTEM_CONTEXT } from "@crm/audit";
import { allPermissions, type AuditEntryView, uuidv7 } from "@crm/contracts";
import { startRetention } from "@crm/service-kit";
import { errorCollectingLogger, internalCaller, principalFor, testInfra } from "@crm/testing";
import { RecordService } from "../src/application/record.service";
import { CustomFieldService } from "../src/application/custom-field.service";
import { CustomFieldCache } from "../src/application/custom-field-cache";
import { CustomFieldStore } from "../src/persistence/custom-field.store";
import { statementRunner } from "../src/persistence/record-reads";
import { entityDefinitions } from "../src/entities";
import { SECRET, sharedHarness, type Mode } from "./harness";

const modes: Mode[] = testInfra.databaseUrl ? ["pglite", "postgres"] : ["pglite"];
const DAY = 86_400_000;

/** A writer whose entries the database refuses (an id that is not a UUID): the change must go with them. */
class RefusedWriter extends AuditWriter {
  override rows(businessId: string | null, changes: readonly AuditChange[], context: AuditContext): AuditRow[] {
    return super.rows(businessId, changes, context).map((row) => ({ ...row, id: "not-a-uuid" }));
  }
}

/** JSON with object members in name order (jsonb keeps its own order). */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_, member: unknown) =>
    member && typeof member === "object" && !Array.isArray(member) ? Object.fromEntries(Object.entries(member).sort(([a], [b]) => a.localeCompare(b))) : member,
  );
}

const context: AuditContext = { actor: { type: "apiKey", id: "k", label: "robot" }, requestId: "r-1", ip: "203.0.113.9", userAgent: "test/1" };

describe.each(modes)("crm-records audit entries on %s", (mode) => {
  jest.setTimeout(120_000);
  const h = sharedHarness(mode, {}, 180_000);

  const service = (audit: AuditWriter, oneStatementCreates: boolean) =>
    new RecordService({
      prisma: h.prisma,
      definitions: entityDefinitions,
      cursorSecret: SECRET,
      sql: h.db.sql,
      audit,
      devices: { oneStatementCreates },
      customFields: new CustomFieldCache(new CustomFieldStore(h.prisma, statementRunner(h.db.sql))),
    });

  it.each([true, false])("no change without its entry: a refused entry leaves no record, no event (one statement: %s)", async (oneStatementCreates) => {
    const businessId = uuidv7();
    const refused = service(new RefusedWriter("records"), oneStatementCreates);
    await expect(refused.create(entityDefinitions.client, businessId, { firstName: "Ada", lastName: "Lovelace" }, context)).rejects.toThrow();
    await expect(refused.createMany(entityDefinitions.product, businessId, [{ name: "A" }, { name: "B" }], context)).rejects.toThrow();
    expect(await h.prisma.client.count({ where: { businessId } })).toBe(0);
    expect(await h.prisma.product.count({ where: { businessId } })).toBe(0);
    expect(await h.prisma.outboxEvent.count({ where: { key: businessId } })).toBe(0);

    const accepted = service(new AuditWriter("records"), oneStatementCreates);
    const client = (await accepted.create(entityDefinitions.client, businessId, { firstName: "Ada", lastName: "Lovelace" }, context)).views[0]!;
    await expect(refused.update(entityDefinitions.client, businessId, client["id"] as string, { lastName: "Byron" }, context)).rejects.toThrow();
    await expect(refused.remove(entityDefinitions.client, businessId, client["id"] as string, context)).rejects.toThrow();
    expect(await h.prisma.client.findFirst({ where: { id: client["id"] as string } })).toMatchObject({ lastName: "Lovelace" });
    const entries = await h.prisma.auditEntry.findMany({ where: { businessId } });
    expect(entries).toMatchObject([
      {
        action: "client.created",
        actorType: "apiKey",
        actorId: "k",
        actorLabel: "robot",
        targetType: "client",
        targetId: client["id"],
        requestId: "r-1",
        ip: "203.0.113.9",
        userAgent: "test/1",
      },
    ]);
  });

  it("a batch writes one entry per record, a cascade one per record it deletes", async () => {
    const businessId = uuidv7();
    const records = service(new AuditWriter("records"), true);
    const products = (await records.createMany(entityDefinitions.product, businessId, [{ name: "A" }, { name: "B" }], context)).views;
    const client = (await records.create(entityDefinitions.client, businessId, { firstName: "Ada", lastName: "Lovelace" }, context)).views[0]!;
    const contact = (await records.create(entityDefinitions.contact, businessId, { clientId: client["id"], type: "EMAIL", value: "a@example.test" }, context)).views[0]!;
    await records.remove(entityDefinitions.client, businessId, client["id"] as string, context);
    const entries = await h.prisma.auditEntry.findMany({ where: { businessId }, orderBy: [{ occurredAt: "asc" }, { id: "asc" }] });
    expect(entries.map((e) => [e.action, e.targetId]).sort()).toEqual(
      [
        ["product.created", products[0]!["id"]],
        ["product.created", products[1]!["id"]],
        ["client.created", client["id"]],
        ["contact.created", contact["id"]],
        ["contact.deleted", contact["id"]],
        ["client.deleted", client["id"]],
      ].sort(),
    );
  });

  it("a custom field definition's create, change, archive, un-archive and permanent delete each write one field.* entry by their actor", async () => {
    const admin = principalFor(uuidv7(), allPermissions, "jwt");
    const api = internalCaller(h.app, admin, { prefix: "/api/v1" });
    await api
      .post("/client/fields", { key: "tier", label: "Tier", type: "select", options: ["gold"] })
      .set("x-request-id", "req-field-1")
      .expect(201);
    await api.patch("/client/fields/tier", { label: "Level", options: ["gold", "silver"] }).expect(200);
    await api.delete("/client/fields/tier").expect(200);
    // Already archived: nothing changes, no entry.
    await api.delete("/client/fields/tier").expect(200);
    await api.patch("/client/fields/tier", { isArchived: false }).expect(200);
    await api.delete("/client/fields/tier").expect(200);
    await api.delete("/client/fields/tier?permanent=true").expect(200);
    // A refused change writes nothing.
    await api.patch("/client/fields/tier", { label: "Gone" }).expect(404);
    await api.post("/product/fields", { key: "tier", label: "Tier", type: "integer" }).expect(201);

    // As the gateway's GET /audit-log reads them: targetType, targetId and action filters. Requests of
    // one millisecond have no set order, so the entries are compared as a set.
    const internal = internalCaller(h.app, admin, { prefix: "" });
    const page = await internal.get(`${INTERNAL_AUDIT_LOG_PATH}?targetType=field&targetId=client.tier&limit=20`).expect(200);
    const entries = page.body.data as AuditEntryView[];
    const created = entries.find((e) => e.action === "field.created")!;
    expect(created).toMatchObject({ actor: { type: "user", id: admin.userId }, target: { type: "field", id: "client.tier" }, requestId: "req-field-1" });
    expect(created.changes).toEqual({
      label: "Tier",
      description: null,
      type: "select",
      required: false,
      unique: false,
      options: ["gold"],
      defaultValue: null,
      isArchived: false,
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    const others = entries.filter((e) => e !== created).map((e) => canonical([e.action, e.target, e.changes]));
    expect(others.sort()).toEqual(
      [
        ["field.updated", { label: { from: "Tier", to: "Level" }, options: { from: ["gold"], to: ["gold", "silver"] } }],
        ["field.updated", { isArchived: { from: false, to: true } }],
        ["field.updated", { isArchived: { from: true, to: false } }],
        ["field.updated", { isArchived: { from: false, to: true } }],
        ["field.deleted", null],
      ]
        .map(([action, changes]) => canonical([action, { type: "field", id: "client.tier" }, changes]))
        .sort(),
    );
    const fieldActions = await internal.get(`${INTERNAL_AUDIT_LOG_PATH}?action=field.*&limit=20`).expect(200);
    expect((fieldActions.body.data as AuditEntryView[]).map((e) => e.target.id).sort()).toEqual([...Array(6).fill("client.tier"), "product.tier"].sort());
    // Another business's log has none of them.
    const other = internalCaller(h.app, principalFor(uuidv7(), allPermissions, "jwt"), { prefix: "" });
    expect((await other.get(`${INTERNAL_AUDIT_LOG_PATH}?action=field.*&limit=20`).expect(200)).body.data).toEqual([]);
  });

  it("no definition change without its entry: a refused entry leaves the definitions as they were", async () => {
    const businessId = uuidv7();
    const store = new CustomFieldStore(h.prisma, statementRunner(h.db.sql));
    const fields = (audit: AuditWriter) => new CustomFieldService(store, new CustomFieldCache(store), entityDefinitions, audit);
    const refused = fields(new RefusedWriter("records"));
    await expect(refused.create("client", businessId, { key: "tier", label: "Tier", type: "text" }, context)).rejects.toThrow();
    expect(await h.prisma.customFieldDefinition.count({ where: { businessId } })).toBe(0);
    await fields(new AuditWriter("records")).create("client", businessId, { key: "tier", label: "Tier", type: "text" }, context);
    await expect(refused.update("client", businessId, "tier", { label: "Level" }, context)).rejects.toThrow();
    await expect(refused.remove("client", businessId, "tier", false, context)).rejects.toThrow();
    expect(await h.prisma.customFieldDefinition.findMany({ where: { businessId } })).toMatchObject([{ key: "tier", label: "Tier", isArchived: false }]);
    expect((await h.prisma.auditEntry.findMany({ where: { businessId } })).map((e) => e.action)).toEqual(["field.created"]);
  });

  it("a record's history: its entries after a purge; an id the business never had, or not a UUID, is 404001", async () => {
    const api = h.caller();
    const product = (await api.post("/product", { name: "Widget" }).expect(201)).body.data.id as string;
    await api.delete(`/product/${product}`).expect(200);
    await api.delete(`/product/${product}?permanent=true`).expect(200);
    const history = await api.get(`/product/${product}/history`).expect(200);
    expect((history.body.data as AuditEntryView[]).map((e) => e.action).sort()).toEqual(["product.created", "product.deleted", "product.purged"]);
    expect(history.body.meta).toEqual({ perPage: 10, nextCursor: null });
    for (const unknown of [uuidv7(), "not-an-id"]) {
      const res = await api.get(`/product/${unknown}/history`).expect(404);
      expect(res.body.error).toMatchObject({ code: 404001, message: "Resource not found" });
    }
    // Another business's record (and its entries) is unknown here; the same id under another entity too.
    await h.caller().get(`/product/${product}/history`).expect(404);
    await api.get(`/service/${product}/history`).expect(404);
  });

  it("retention deletes entries older than AUDIT_RETENTION_DAYS on the job's clock, and keeps the rest", async () => {
    const businessId = uuidv7();
    const now = new Date("2031-06-01T00:00:00.000Z");
    const at = (ms: number) => new AuditWriter("records", () => new Date(ms));
    const change = (id: string): AuditChange => ({ action: "client.deleted", target: { type: "client", id }, changes: null });
    await h.prisma.$transaction(async (tx) => {
      await at(now.getTime() - 366 * DAY).record(tx, businessId, [change("old-1"), change("old-2"), change("old-3")], SYSTEM_CONTEXT);
      await at(now.getTime() - 364 * DAY).record(tx, businessId, change("kept"), SYSTEM_CONTEXT);
    });
    const { logger, errors } = errorCollectingLogger("crm-records");
    const retention = startRetention({
      rules: [auditRetentionRule({ db: h.prisma, schema: "records", retentionDays: 365 })],
      intervalMs: 3_600_000,
      batchSize: 2,
      logger,
      now: () => now,
    });
    try {
      await retention.runNow();
      const left = await h.prisma.auditEntry.findMany({ where: { businessId }, select: { targetId: true } });
      expect(left.map((e) => e.targetId)).toEqual(["kept"]);
      expect(errors).toEqual([]);
    } finally {
      await retention.stop();
    }
  });
});
