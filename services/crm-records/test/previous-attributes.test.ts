// `previousAttributes` on `{entity}.updated` events (extensions §E1.4): written by the update path
// into the same outbox row as the change, from the row as it was before (locked, so two concurrent
// updates each report the state they replaced). Both database modes.
import { RECORDS_TOPIC, type EventEnvelope } from "@crm/contracts";
import { describePostgres } from "@crm/testing";
import { createClient, sharedHarness, type Harness, type Mode } from "./harness";

async function lastEvent(h: Harness, businessId: string, type: string): Promise<EventEnvelope> {
  const rows = await h.prisma.outboxEvent.findMany({ where: { key: businessId, topic: RECORDS_TOPIC }, orderBy: { sequence: "desc" } });
  const found = rows.map((r) => r.payload as unknown as EventEnvelope).find((e) => e.type === type);
  if (!found) throw new Error(`no ${type} event`);
  return found;
}

function suite(mode: Mode): void {
  const h = sharedHarness(mode);

  it("names every changed field with its value before, as GET showed it; not updatedAt", async () => {
    const caller = h.caller();
    const id = await createClient(caller, { email: "ada@example.com" });
    const before = (await caller.get(`/client/${id}?include=-contacts`).expect(200)).body.data;
    const after = (await caller.patch(`/client/${id}`, { lastName: "Byron", notes: "Grüße 😀", email: "ada@example.com" }).expect(200)).body.data;
    const event = await lastEvent(h, caller.businessId, "client.updated");
    expect(event.data).toEqual(after);
    expect(event.previousAttributes).toEqual({ lastName: before.lastName, notes: null });
  });

  it("is {} when nothing changed", async () => {
    const caller = h.caller();
    const id = await createClient(caller, { firstName: "Same" });
    await caller.patch(`/client/${id}`, { firstName: "Same" }).expect(200);
    expect((await lastEvent(h, caller.businessId, "client.updated")).previousAttributes).toEqual({});
  });

  it("counts items as one field and includes the recomputed totalAmount", async () => {
    const caller = h.caller();
    const clientId = await createClient(caller);
    const created = (await caller.post("/invoice", { clientId, items: [{ description: "Work", quantity: 1, unitPrice: 10 }] }).expect(201)).body.data;
    await caller.put(`/invoice/${created.id}`, { items: [{ description: "Work", quantity: 3, unitPrice: 10 }], status: "SENT" }).expect(200);
    const event = await lastEvent(h, caller.businessId, "invoice.updated");
    expect(event.previousAttributes).toEqual({ items: created.items, totalAmount: 10, status: "DRAFT" });
    expect(event.data).toMatchObject({ totalAmount: 30, status: "SENT" });
  });

  it("is not on created or deleted events, and a failed update writes no event", async () => {
    const caller = h.caller();
    const id = await createClient(caller);
    await caller.patch(`/client/${id}`, { email: "not an email" }).expect(400);
    await caller.delete(`/client/${id}`).expect(200);
    const rows = await h.prisma.outboxEvent.findMany({ where: { key: caller.businessId } });
    const events = rows.map((r) => r.payload as unknown as EventEnvelope);
    expect(events.map((e) => e.type).sort()).toEqual(["client.created", "client.deleted"]);
    for (const event of events) expect(event).not.toHaveProperty("previousAttributes");
  });

  it("reports, for each of two concurrent updates, the state it replaced", async () => {
    const caller = h.caller();
    const id = await createClient(caller, { notes: "v0" });
    await Promise.all([caller.patch(`/client/${id}`, { notes: "v1" }).expect(200), caller.patch(`/client/${id}`, { notes: "v2" }).expect(200)]);
    const rows = await h.prisma.outboxEvent.findMany({ where: { key: caller.businessId }, orderBy: { sequence: "asc" } });
    const updates = rows.map((r) => r.payload as unknown as EventEnvelope).filter((e) => e.type === "client.updated");
    expect(updates).toHaveLength(2);
    // The second to commit saw the first one's value, whichever order they ran in.
    expect(updates[0]!.previousAttributes).toEqual({ notes: "v0" });
    expect(updates[1]!.previousAttributes).toEqual({ notes: updates[0]!.data["notes"] });
  });
}

describe("previousAttributes on PGlite", () => suite("pglite"));
describePostgres("previousAttributes on PostgreSQL", () => suite("postgres"));
