// pg prepares a named statement once per connection and refuses a second text under the same name,
// so a one-record create may carry its entity's name only while its text depends on nothing but the
// entity: every value of the create travels as a parameter.
import { AuditWriter, SYSTEM_CONTEXT } from "@crm/audit";
import type { RecordEntity } from "@crm/contracts";
import { entityDefinitions } from "../entities";
import type { Row } from "../domain/record.serializer";
import { recordAuditChange } from "../domain/record-audit";
import { buildEnvelope } from "./outbox.writer";
import { insertedRow, insertRecordsStatement, insertRecordStatement } from "./record-insert";

const BUSINESS = "0193a4b2-7c5d-7e8f-9a0b-1c2d3e4f5a6b";
const writer = new AuditWriter("records");
const auditOf = (event: ReturnType<typeof buildEnvelope>) => writer.rows(BUSINESS, [recordAuditChange(event)], SYSTEM_CONTEXT)[0]!;

function statementFor(entity: RecordEntity, data: Row, version = 0n, sortable = false) {
  const definition = entityDefinitions[entity];
  const row = insertedRow(definition, { ...data, businessId: BUSINESS }, new Date());
  const event = buildEnvelope(entity, "created", BUSINESS, row as never);
  return insertRecordStatement(definition, { data: { ...data, businessId: BUSINESS }, row, event, audit: auditOf(event) }, { version, sortable });
}

describe("insertRecordStatement", () => {
  it.each<[RecordEntity, Row, Row]>([
    [
      "client",
      { id: "0193a4b2-0000-7000-8000-000000000001", firstName: "Ada", lastName: "Lovelace" },
      { id: "0193a4b2-0000-7000-8000-000000000002", firstName: "Grace", lastName: "Hopper", email: "g@example.com", isActive: false, notes: "x" },
    ],
    [
      "contact",
      { id: "0193a4b2-0000-7000-8000-000000000003", clientId: BUSINESS, type: "EMAIL", value: "a@example.com" },
      { id: "0193a4b2-0000-7000-8000-000000000004", clientId: BUSINESS, type: "PHONE", value: "1", isPrimary: true },
    ],
    ["product", { id: "0193a4b2-0000-7000-8000-000000000005", name: "Widget" }, { id: "0193a4b2-0000-7000-8000-000000000006", name: "Gadget", price: "12.50" }],
  ])("%s: one name and one text for creates with different values and definition versions", (entity, first, second) => {
    const a = statementFor(entity, first);
    const b = statementFor(entity, second, 7n);
    expect(a.name).toBe(`records_create_${entity}`);
    expect(b.name).toBe(a.name);
    expect(b.sql).toBe(a.sql);
    expect(b.params).not.toEqual(a.params);
  });

  it("names differ between entities, and a batch (its text grows with its length) has none", () => {
    const client = statementFor("client", { id: "0193a4b2-0000-7000-8000-000000000001", firstName: "Ada", lastName: "Lovelace" });
    const employee = statementFor("employee", { id: "0193a4b2-0000-7000-8000-000000000002", firstName: "Ada", lastName: "Lovelace" });
    expect(employee.name).not.toBe(client.name);
    const definition = entityDefinitions.client;
    const data = { id: "0193a4b2-0000-7000-8000-000000000001", businessId: BUSINESS, firstName: "Ada", lastName: "Lovelace" };
    const row = insertedRow(definition, data, new Date());
    const event = buildEnvelope("client", "created", BUSINESS, row as never);
    const batch = insertRecordsStatement(definition, [{ data, row, event, audit: auditOf(event) }], { version: 0n, sortable: false });
    expect(batch.name).toBeUndefined();
  });

  it("writes sort values only for an entity with a sortable definition, under a name of its own", () => {
    const data = { id: "0193a4b2-0000-7000-8000-000000000001", firstName: "Ada", lastName: "Lovelace" };
    const plain = statementFor("client", data);
    const sorted = statementFor("client", data, 3n, true);
    expect(plain.sql).not.toContain("CustomFieldSortValue");
    expect(sorted.sql).toContain("CustomFieldSortValue");
    expect(sorted.name).toBe("records_create_client_sorted");
    // The sort values read the record's own parameters: none is added.
    expect(sorted.params).toHaveLength(plain.params.length);
  });
});
