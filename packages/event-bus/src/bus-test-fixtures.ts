// What the event-bus tests share: envelopes numbered per business, a bus that records what it is
// given, and an outbox kept in memory (the relay's contract without a database).
import { uuidv7, type EventEnvelope } from "@crm/contracts";
import { createLogger } from "@crm/logger";
import { MessageRejectedError, valueJson, type BusMessage, type BusValue, type EventBus, type SerializedEnvelope } from "./event-bus";
import type { OutboxRow, OutboxStore } from "./outbox-relay";
export const logger = createLogger({ service: "test", level: "silent" });

export function event(businessId: string, n: number, padding = 0): EventEnvelope {
  const data = padding > 0 ? { n, notes: "x".repeat(padding) } : { n };
  return { id: uuidv7(), type: "client.created", businessId, occurredAt: new Date().toISOString(), version: 1, data };
}

/** Messages of one business keyed by it, carrying events numbered `ns`, in order. */
export function numbered(businessId: string, ns: readonly number[]): BusMessage[] {
  return ns.map((n) => ({ key: businessId, value: event(businessId, n) }));
}

/** An envelope as the outbox store reads it: its JSON as stored (PostgreSQL's jsonb text, with spaces), id and type. */
export function serialized(e: EventEnvelope): SerializedEnvelope {
  return { json: JSON.stringify(e, null, 1), id: e.id, type: e.type };
}

/** The envelope a message carries, whichever way it carries it. */
export function envelopeOf(value: BusValue): EventEnvelope {
  return "json" in value ? (JSON.parse(value.json) as EventEnvelope) : value;
}

/** What a message weighs as Kafka carries it: the JSON value and the key. */
export function wireBytes(messages: readonly BusMessage[]): number {
  return messages.reduce((sum, m) => sum + Buffer.byteLength(valueJson(m.value)) + Buffer.byteLength(m.key), 0);
}

/** A bus that records every publish call and refuses, for good, any call carrying a condemned event. */
export class RecordingBus implements EventBus {
  readonly kind = "in-process" as const;
  readonly calls: BusMessage[][] = [];
  readonly condemned = new Set<string>();
  transientFailure: Error | undefined;
  /** Runs during each accepted publish, before it returns (e.g. a write committed meanwhile). */
  duringPublish: (() => void) | undefined;
  async publish(_topic: string, messages: readonly BusMessage[]) {
    if (this.transientFailure) throw this.transientFailure;
    if (messages.some((m) => this.condemned.has(m.value.id))) throw new MessageRejectedError("MESSAGE_TOO_LARGE");
    this.calls.push([...messages]);
    this.duringPublish?.();
  }
  published(): number[] {
    return this.calls.flat().map((m) => envelopeOf(m.value).data.n as number);
  }
  async subscribe(): Promise<never> {
    throw new Error("not used");
  }
  async ping() {}
  async close() {}
}

/** An outbox kept in memory: the relay's contract without a database (the Prisma store has its own tests). */
export class MemoryOutbox implements OutboxStore {
  rows: Array<OutboxRow & { sent: boolean; deadLetter?: string }> = [];
  deadLetterCalls: bigint[] = [];
  leaseHolder: string | undefined;
  leaseCalls = 0;
  add(topic: string, e: EventEnvelope) {
    // As the SQL store reads it: the JSON as stored.
    this.rows.push({ sequence: BigInt(this.rows.length + 1), topic, key: e.businessId, payload: serialized(e), sent: false });
    return e;
  }
  /** Calls of the store's reads and marks, by name. */
  readonly calls = { pending: 0, markSent: 0, markSentAndPending: 0 };
  async pending(limit: number) {
    this.calls.pending += 1;
    return this.rows.filter((r) => !r.sent && r.deadLetter === undefined).slice(0, limit);
  }
  async deadLetter(sequence: bigint, reason: string) {
    this.deadLetterCalls.push(sequence);
    const row = this.rows.find((r) => r.sequence === sequence);
    if (row) row.deadLetter = reason;
  }
  async markSent(sequences: readonly bigint[]) {
    this.calls.markSent += 1;
    for (const r of this.rows) if (sequences.includes(r.sequence)) r.sent = true;
  }
  async acquireLease(holder: string) {
    this.leaseCalls += 1;
    if (this.leaseHolder && this.leaseHolder !== holder) return false;
    this.leaseHolder = holder;
    return true;
  }
  async releaseLease(holder: string) {
    if (this.leaseHolder === holder) this.leaseHolder = undefined;
  }
}

/** The same outbox, marking a publish's rows and reading the rows behind them in one call. */
export class MergingMemoryOutbox extends MemoryOutbox {
  async markSentAndPending(sequences: readonly bigint[], limit: number) {
    this.calls.markSentAndPending += 1;
    for (const r of this.rows) if (sequences.includes(r.sequence)) r.sent = true;
    return this.rows.filter((r) => !r.sent && r.deadLetter === undefined).slice(0, limit);
  }
}

/** The relay's contract holds with either kind of store. */
export const STORES = [
  ["marks and reads apart", MemoryOutbox],
  ["marks and reads in one call", MergingMemoryOutbox],
] as const;
