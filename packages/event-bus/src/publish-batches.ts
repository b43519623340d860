// How the outbox relay cuts pending rows into publish requests: consecutive rows of one topic, each
// request at most `maxBytes` of encoded messages (a row larger than that goes alone). Kafka refuses a
// record batch above the broker's message.max.bytes (1 MiB by default) as a whole, so an unbounded
// batch of ordinary events could fail forever while every event in it is fine on its own.
import { valueJson } from "./event-bus";
import type { OutboxRow } from "./outbox-relay";

/** Default budget of one publish request: a quarter of Kafka's default message.max.bytes. */
export const DEFAULT_MAX_BATCH_BYTES = 256 * 1024;

/** Record framing, the `event-type` header and its value: a generous upper bound per message. */
const MESSAGE_OVERHEAD_BYTES = 128;

/** What one row weighs on the wire: its JSON value, its key and the record framing. */
export function encodedSize(row: OutboxRow): number {
  return Buffer.byteLength(valueJson(row.payload)) + Buffer.byteLength(row.key) + MESSAGE_OVERHEAD_BYTES;
}

/** Splits rows, in order, into publish batches of one topic and at most `maxBytes` each (at least one row). */
export function publishBatches(rows: readonly OutboxRow[], maxBytes: number, sizeOf: (row: OutboxRow) => number = encodedSize): OutboxRow[][] {
  const batches: OutboxRow[][] = [];
  let current: OutboxRow[] = [];
  let currentBytes = 0;
  for (const row of rows) {
    const bytes = sizeOf(row);
    const fits = current.length > 0 && current[0]!.topic === row.topic && currentBytes + bytes <= maxBytes;
    if (!fits && current.length > 0) {
      batches.push(current);
      current = [];
      currentBytes = 0;
    }
    current.push(row);
    currentBytes += bytes;
  }
  if (current.length > 0) batches.push(current);
  return batches;
}
