// pg prepares a named statement once per connection and refuses a second text under the same name,
// so each relay statement may carry a name only while its text never changes: every value travels
// as a parameter. What the statements do is tested on PGlite and PostgreSQL in test/events.test.ts.
import type { SqlRunner } from "@crm/database";
import { SqlOutboxStore } from "./outbox.store";

interface Sent {
  text: string;
  params: unknown[] | undefined;
  name: string | undefined;
}

function recordingStore(): { store: SqlOutboxStore; sent: Sent[] } {
  const sent: Sent[] = [];
  const sql: Pick<SqlRunner, "query"> = {
    query: async <T>(text: string, params?: unknown[], options?: { name?: string }) => {
      sent.push({ text, params, name: options?.name });
      return { rows: [] as T[] };
    },
  };
  return { store: new SqlOutboxStore(sql), sent };
}

describe("SqlOutboxStore's statements", () => {
  it("prepares each round's statement under one name per text, whatever the values", async () => {
    const { store, sent } = recordingStore();
    for (const [sequences, limit] of [
      [[1n], 10],
      [[2n, 3n, 4n], 100],
    ] as const) {
      await store.pending(limit);
      await store.markSentAndPending(sequences, limit);
      await store.markSent(sequences);
      await store.acquireLease(`holder-${limit}`, limit * 1000);
    }
    const names = sent.map((s) => s.name);
    expect(names).toEqual([
      "outbox_pending",
      "outbox_mark_sent_and_pending",
      "outbox_mark_sent",
      "outbox_lease",
      "outbox_pending",
      "outbox_mark_sent_and_pending",
      "outbox_mark_sent",
      "outbox_lease",
    ]);
    for (let i = 0; i < 4; i++) {
      expect(sent[i + 4]!.text).toBe(sent[i]!.text);
      expect(sent[i + 4]!.params).not.toEqual(sent[i]!.params);
    }
  });
});
