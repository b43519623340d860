// Concurrent one-record creates of an entity share statements (create-batcher.ts). Each request must
// still see only its own outcome: its record, its own event (in the outbox, in arrival order per
// business), its business's count; a create refused by a foreign key fails alone and writes nothing,
// while the creates that went in the same statement are written.
import { uuidv7, type EventEnvelope } from "@crm/contracts";
import { describePostgres } from "@crm/testing";
import { entityDefinitions } from "../src/entities";
import { CreateBatcher, refusedByDatabase } from "../src/persistence/create-batcher";
import { insertedRow, type InsertEntry, type InsertStatement } from "../src/persistence/record-insert";
import { buildEnvelope } from "../src/persistence/outbox.writer";
import { createClient, sharedHarness, type Caller, type Mode } from "./harness";

function coalescedCreatesSuite(mode: Mode) {
  const h = sharedHarness(mode);

  async function total(caller: Caller, entity: string): Promise<number> {
    return (await caller.get(`/${entity}?perPage=1`).expect(200)).body.meta.total as number;
  }

  async function events(businessId: string): Promise<Array<{ payload: EventEnvelope; traceparent: string | null }>> {
    const rows = await h.prisma.outboxEvent.findMany({ where: { key: businessId }, orderBy: { sequence: "asc" } });
    return rows.map((r) => ({ payload: r.payload as unknown as EventEnvelope, traceparent: r.traceparent }));
  }

  it("writes every one of many concurrent creates of several businesses, each with its event and count", async () => {
    const callers = [h.caller(), h.caller(), h.caller()];
    const made = await Promise.all(
      Array.from({ length: 45 }, async (_, i) => {
        const caller = callers[i % 3]!;
        const res = await caller.post("/client", { firstName: `F${i}`, lastName: "L", email: `c${i}@example.com` }).expect(201);
        return { caller, body: res.body.data as Record<string, unknown> };
      }),
    );
    for (const caller of callers) {
      const mine = made.filter((m) => m.caller === caller).map((m) => m.body);
      expect(await total(caller, "client")).toBe(15);
      const written = await events(caller.businessId);
      expect(written.map((e) => e.payload.type)).toEqual(Array(15).fill("client.created"));
      expect(written.every((e) => e.payload.businessId === caller.businessId)).toBe(true);
      // Each event is its record as the response showed it, and each record is stored as shown.
      const byId = (a: Record<string, unknown>, b: Record<string, unknown>) => String(a["id"]).localeCompare(String(b["id"]));
      expect(written.map((e) => e.payload.data as Record<string, unknown>).sort(byId)).toEqual([...mine].sort(byId));
      for (const body of mine.slice(0, 3)) expect((await caller.get(`/client/${body["id"] as string}`).expect(200)).body.data).toMatchObject(body);
    }
  });

  it("refuses only the contact whose client is unknown; the contacts written beside it stay", async () => {
    const caller = h.caller();
    const clientId = await createClient(caller);
    const other = h.caller();
    const foreignClient = await createClient(other);
    const bodies = Array.from({ length: 12 }, (_, i) => ({ clientId: i === 5 ? uuidv7() : i === 8 ? foreignClient : clientId, type: "EMAIL", value: `v${i}@example.com` }));
    const statuses = await Promise.all(bodies.map(async (body) => (await caller.post("/contact", body)).status));
    expect(statuses).toEqual(bodies.map((_, i) => (i === 5 || i === 8 ? 400 : 201)));
    expect(await total(caller, "contact")).toBe(10);
    expect((await events(caller.businessId)).filter((e) => e.payload.type === "contact.created")).toHaveLength(10);
    expect(await total(other, "contact")).toBe(0);
  });

  it("keeps a business's events in the order its creates were sent, each with its own traceparent", async () => {
    const definition = entityDefinitions.client;
    const sent: InsertStatement[] = [];
    const run = (statement: InsertStatement) => {
      sent.push(statement);
      return h.db.sql.query(statement.sql, statement.params, statement.name ? { name: statement.name } : undefined);
    };
    const batcher = new CreateBatcher({ run, inFlight: 1, maxBatch: 4 });
    const businesses = [uuidv7(), uuidv7()];
    const entries: InsertEntry[] = Array.from({ length: 10 }, (_, i) => {
      const businessId = businesses[i % 2]!;
      const data = { id: uuidv7(), businessId, firstName: `F${i}`, lastName: "L" };
      const row = insertedRow(definition, data, new Date());
      return {
        data,
        row,
        event: buildEnvelope("client", "created", businessId, row as never),
        traceparent: `00-${"a".repeat(30)}${String(i).padStart(2, "0")}-${"b".repeat(16)}-01`,
      };
    });
    await Promise.all(entries.map((entry) => batcher.create(definition, entry)));
    // The first went alone, the rest waited for it and went at most four at a time.
    expect(sent.map((s) => s.name)).toEqual(["records_create_client", "records_create_client_x4", "records_create_client_x4", "records_create_client"]);
    for (const businessId of businesses) {
      const written = await events(businessId);
      const expected = entries.filter((e) => e.event.businessId === businessId);
      expect(written.map((e) => e.payload.id)).toEqual(expected.map((e) => e.event.id));
      expect(written.map((e) => e.traceparent)).toEqual(expected.map((e) => e.traceparent));
    }
  });
}

describe("refusedByDatabase", () => {
  it("is true for an error PostgreSQL reported, false for a lost connection or a driver's own error", () => {
    expect(refusedByDatabase(Object.assign(new Error("fk"), { code: "23503" }))).toBe(true);
    expect(refusedByDatabase(Object.assign(new Error("gone"), { code: "08006" }))).toBe(false);
    expect(refusedByDatabase(Object.assign(new Error("reset"), { code: "ECONNRESET" }))).toBe(false);
    expect(refusedByDatabase(new Error("timeout"))).toBe(false);
  });
});

describe("coalesced creates on PGlite", () => coalescedCreatesSuite("pglite"));
describePostgres("coalesced creates on PostgreSQL", () => coalescedCreatesSuite("postgres"));
