import { z } from "./zod";

/** The seven entities of the generic record mechanism, by their path/event name (decisions §2). */
export const recordEntities = ["client", "contact", "invoice", "quote", "product", "service", "employee"] as const;
export type RecordEntity = (typeof recordEntities)[number];

/** `restored`: a record brought back from the trash (extensions §E5). */
export const eventActions = ["created", "updated", "deleted", "restored"] as const;
export type EventAction = (typeof eventActions)[number];

export type EventName = `${RecordEntity}.${EventAction}`;

/** The one helper that builds event names. */
export function eventName(entity: RecordEntity, action: EventAction): EventName {
  return `${entity}.${action}`;
}

export const eventCatalogue: readonly EventName[] = recordEntities.flatMap((e) => eventActions.map((a) => eventName(e, a)));

const knownEvents = new Set<string>(eventCatalogue);
export function isEventName(value: string): value is EventName {
  return knownEvents.has(value);
}

/** The topic the CRM-records context publishes to; keyed by businessId so order holds per business. */
export const RECORDS_TOPIC = "crm.records.v1";

/** Envelope of every event on the bus (decisions §6). */
export const eventEnvelopeSchema = z.object({
  id: z.string().uuid(),
  type: z.string(),
  businessId: z.string(),
  occurredAt: z.string(),
  version: z.literal(1),
  data: z.record(z.string(), z.unknown()),
  /** `{entity}.updated` only: each field the update changed, with its value before (extensions §E1.4). */
  previousAttributes: z.record(z.string(), z.unknown()).optional(),
});
export type EventEnvelope = z.infer<typeof eventEnvelopeSchema>;
