// The audit entries crm-records writes (extensions §E7): in the same statement or transaction as the
// change, so a change whose entry cannot be written does not happen either, on both create paths; the
// entries of a history as the API shows them; retention by AUDIT_RETENTION_DAYS on a moved clock.
import { type AuditChange, type AuditContext, type AuditRow, auditRetentionRule, AuditWriter, SYSTEM_CONTEXT } from "@crm/audit";
import { uuidv7 } from "@crm/contracts";
import { startRetention } from "@crm/service-kit";
import { errorCollectingLogger, testInfra } from "@crm/testing";
import { RecordService } from "../src/application/record.service";
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
