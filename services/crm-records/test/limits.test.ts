// Write-time limits (issue 16, item 3): every text field and the item count of a document are
// bounded, answered with 400001 naming the field beyond them, so that no write can make an event
// the bus would refuse. The largest accepted invoice is written and its outbox event weighed.
import { RECORD_LIMITS, type EventEnvelope } from "@crm/contracts";
import { createClient, sharedHarness, type Caller } from "./harness";

/** The character JSON encodes most expensively (`\u0001`: 6 bytes for 1 character). */
const WORST = "\u0001";
const worst = (length: number) => WORST.repeat(length);
const item = { description: "Work", quantity: 1, unitPrice: 10 };

function paths(res: { body: { error?: { details?: Array<{ path: string }> } } }): string[] {
  return (res.body.error?.details ?? []).map((d) => d.path);
}

describe("write-time limits (PGlite)", () => {
  const h = sharedHarness("pglite");
  let caller: Caller;
  let clientId: string;

  beforeAll(async () => {
    caller = h.caller();
    clientId = await createClient(caller);
  });

  it.each([
    ["/client", "firstName", () => ({ firstName: "x".repeat(RECORD_LIMITS.name + 1), lastName: "L" })],
    ["/client", "notes", () => ({ firstName: "F", lastName: "L", notes: "x".repeat(RECORD_LIMITS.longText + 1) })],
    ["/client", "companyName", () => ({ firstName: "F", lastName: "L", companyName: "x".repeat(RECORD_LIMITS.name + 1) })],
    ["/client", "phone", () => ({ firstName: "F", lastName: "L", phone: "1".repeat(RECORD_LIMITS.phone + 1) })],
    ["/client", "email", () => ({ firstName: "F", lastName: "L", email: `${"a".repeat(RECORD_LIMITS.email)}@example.com` })],
    ["/contact", "value", () => ({ clientId, type: "OTHER", value: "x".repeat(RECORD_LIMITS.contactValue + 1) })],
    ["/invoice", "items", () => ({ clientId, items: Array.from({ length: RECORD_LIMITS.itemsPerDocument + 1 }, () => item) })],
    ["/quote", "items", () => ({ clientId, items: Array.from({ length: RECORD_LIMITS.itemsPerDocument + 1 }, () => item) })],
    ["/invoice", "items.1.description", () => ({ clientId, items: [item, { ...item, description: "x".repeat(RECORD_LIMITS.itemDescription + 1) }] })],
    ["/invoice", "notes", () => ({ clientId, items: [item], notes: "x".repeat(RECORD_LIMITS.longText + 1) })],
    ["/product", "description", () => ({ name: "P", description: "x".repeat(RECORD_LIMITS.longText + 1) })],
    ["/product", "sku", () => ({ name: "P", sku: "x".repeat(RECORD_LIMITS.sku + 1) })],
    ["/service", "unit", () => ({ name: "S", unit: "x".repeat(RECORD_LIMITS.unit + 1) })],
    ["/employee", "position", () => ({ firstName: "F", lastName: "L", position: "x".repeat(RECORD_LIMITS.name + 1) })],
  ] as const)("POST %s beyond a limit: 400001 naming %s", async (url, path, body) => {
    const res = await caller.post(url, body());
    expect([res.status, res.body.error?.code, paths(res)]).toEqual([400, 400001, [path]]);
  });

  it("applies the same limits to updates, and writes nothing when refused", async () => {
    const invoice = (await caller.post("/invoice", { clientId, items: [item] }).expect(201)).body.data;
    const tooMany = Array.from({ length: RECORD_LIMITS.itemsPerDocument + 1 }, () => item);
    const res = await caller.patch(`/invoice/${invoice.id}`, { items: tooMany });
    expect([res.status, res.body.error?.code, paths(res)]).toEqual([400, 400001, ["items"]]);
    const notes = await caller.patch(`/client/${clientId}`, { notes: "x".repeat(RECORD_LIMITS.longText + 1) });
    expect([notes.status, paths(notes)]).toEqual([400, ["notes"]]);
    expect((await caller.get(`/invoice/${invoice.id}`).expect(200)).body.data.items).toHaveLength(1);
  });

  it("accepts the largest invoice the limits allow, and its event stays far under Kafka's 1 MiB message limit", async () => {
    const largest = {
      clientId,
      items: Array.from({ length: RECORD_LIMITS.itemsPerDocument }, () => ({
        description: worst(RECORD_LIMITS.itemDescription),
        quantity: 99_999_999_999.9999,
        unitPrice: 99_999_999_999.9999,
      })),
      notes: worst(RECORD_LIMITS.longText),
      currency: "EUR",
      issueDate: "2026-01-31",
      dueDate: "2026-02-28",
    };
    const created = (await caller.post("/invoice", largest).expect(201)).body.data;
    expect(created.items).toHaveLength(RECORD_LIMITS.itemsPerDocument);
    const row = await h.prisma.outboxEvent.findFirstOrThrow({ where: { key: caller.businessId, payload: { path: ["data", "id"], equals: created.id } } });
    expect(Buffer.byteLength(JSON.stringify(row.payload as unknown as EventEnvelope))).toBeLessThan(400 * 1024);
    // As the relay publishes it: the payload's JSON as PostgreSQL keeps it (a space after each ':' and ',').
    const [stored] = await h.prisma.$queryRaw<
      Array<{ bytes: number }>
    >`SELECT octet_length("payload"::text)::int AS bytes FROM "records"."OutboxEvent" WHERE "sequence" = ${row.sequence}`;
    expect(stored!.bytes).toBeLessThan(400 * 1024);

    // The largest client, for scale: the other entities are smaller still.
    const client = {
      firstName: worst(RECORD_LIMITS.name),
      lastName: worst(RECORD_LIMITS.name),
      companyName: worst(RECORD_LIMITS.name),
      phone: worst(RECORD_LIMITS.phone),
      notes: worst(RECORD_LIMITS.longText),
    };
    const createdClient = (await caller.post("/client", client).expect(201)).body.data;
    expect(Buffer.byteLength(JSON.stringify(createdClient))).toBeLessThan(100 * 1024);
  });
});
