// The relay's pending reads walk the pending-only index (migration 20261126104500_outbox_pending_index)
// in sequence order, whatever the table's statistics say. The bitmap scan PostgreSQL chose before
// visited every row a mark had left dead in ("sentAt", sequence) until VACUUM ran: PostgreSQL's CPU per
// create fell from 0.81-1.01 to 0.52-0.55 ms in `bench:records` with this index (docs/performance.md).
import type { SqlRunner } from "@crm/database";
import { testInfra } from "@crm/testing";
import { SqlOutboxStore } from "../src/persistence/outbox.store";
import { sharedHarness, type Mode } from "./harness";

const modes: Mode[] = testInfra.databaseUrl ? ["pglite", "postgres"] : ["pglite"];

/** The text and values each relay read sends, captured without running them. */
async function relayReads(): Promise<Array<{ text: string; params: unknown[] }>> {
  const sent: Array<{ text: string; params: unknown[] }> = [];
  const sql: Pick<SqlRunner, "query"> = {
    query: async <T>(text: string, params?: unknown[]) => {
      sent.push({ text, params: params ?? [] });
      return { rows: [] as T[] };
    },
  };
  const store = new SqlOutboxStore(sql);
  await store.pending(100);
  await store.markSentAndPending([1n, 2n], 100);
  return sent;
}

describe.each(modes)("the relay's pending reads on %s", (mode) => {
  jest.setTimeout(60_000);
  const h = sharedHarness(mode, {}, 180_000);

  it("walk the pending index, with thousands of rows sent and a few not", async () => {
    const now = Date.now();
    // Unsent rows, seeded in one statement each time.
    const insertUnsent = (count: number) =>
      h.prisma.$executeRawUnsafe(
        `INSERT INTO "records"."OutboxEvent" (id, topic, key, payload)
         SELECT gen_random_uuid(), 'crm.records.v1', gen_random_uuid()::text, '{"type":"client.created"}' FROM generate_series(1, $1::int)`,
        count,
      );
    await insertUnsent(3000);
    // Marked the way the relay marks them: the index entries of their unsent versions are left behind.
    await h.prisma.outboxEvent.updateMany({ where: { sentAt: null }, data: { sentAt: new Date(now) } });
    await insertUnsent(5);

    for (const { text, params } of await relayReads()) {
      const plan = JSON.stringify(await h.prisma.$queryRawUnsafe(`EXPLAIN (FORMAT JSON) ${text}`, ...params));
      expect(plan).toContain('"Index Name":"OutboxEvent_pending_idx"');
      expect(plan).not.toContain("Bitmap Heap Scan");
    }
  });
});
