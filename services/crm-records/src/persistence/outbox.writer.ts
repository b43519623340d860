// Appends an event to the outbox inside the caller's transaction, so the event exists exactly
// when the change does (decisions §6).
import { eventName, RECORDS_TOPIC, uuidv7, type EventAction, type EventEnvelope, type RecordEntity } from "@crm/contracts";
import { activeTraceHeaders } from "@crm/telemetry";
import type { RecordView } from "../domain/record.serializer";
import type { Prisma, Tx } from "./prisma";

/** `previousAttributes`: on `updated` events only, what the update changed (extensions §E1.4). */
export function buildEnvelope(entity: RecordEntity, action: EventAction, businessId: string, data: RecordView, previousAttributes?: RecordView): EventEnvelope {
  const envelope: EventEnvelope = { id: uuidv7(), type: eventName(entity, action), businessId, occurredAt: new Date().toISOString(), version: 1, data };
  if (previousAttributes !== undefined) envelope.previousAttributes = previousAttributes;
  return envelope;
}

/** Several events in one INSERT; their sequence follows the array's order. */
export async function appendEvents(tx: Tx, envelopes: readonly EventEnvelope[]): Promise<void> {
  // A purge commits no event (extensions §E5).
  if (envelopes.length === 0) return;
  if (envelopes.length === 1) return appendEvent(tx, envelopes[0]!);
  const traceparent = activeTraceHeaders()?.traceparent ?? null;
  await tx.outboxEvent.createMany({
    data: envelopes.map((envelope) => ({ id: envelope.id, topic: RECORDS_TOPIC, key: envelope.businessId, payload: envelope as unknown as Prisma.InputJsonObject, traceparent })),
  });
}

export async function appendEvent(tx: Tx, envelope: EventEnvelope): Promise<void> {
  await tx.outboxEvent.create({
    data: {
      id: envelope.id,
      topic: RECORDS_TOPIC,
      key: envelope.businessId,
      payload: envelope as unknown as Prisma.InputJsonObject,
      // The write's trace continues through the relay and the consumer (tracing on; else null).
      traceparent: activeTraceHeaders()?.traceparent ?? null,
    },
  });
}
