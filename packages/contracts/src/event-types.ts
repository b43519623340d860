// The event catalogue served at GET /api/v1/event-types (extensions §E1.6): every event of the
// catalogue with a JSON Schema of its delivery body, generated from the same zod schemas the records
// service answers with and the delivery service sends, so the two cannot drift apart.
import { z } from "./zod";
import { eventActions, eventName, recordEntities, type EventAction, type EventName, type RecordEntity } from "./events";
import { recordContracts } from "./records";
import { truncatedRelationField } from "./record-responses";

/** What a record event's `data` holds: the record as GET returns it, without relations (decisions §6). */
export function recordEventDataSchema(entity: RecordEntity) {
  const contract = recordContracts[entity];
  const omitted: Record<string, true> = {};
  for (const relation of Object.keys(contract.relations)) {
    omitted[relation] = true;
    omitted[truncatedRelationField(relation)] = true;
  }
  const view = contract.view as unknown as z.ZodObject<z.ZodRawShape>;
  return view
    .omit(
      Object.fromEntries(
        Object.keys(view.shape)
          .filter((k) => omitted[k])
          .map((k) => [k, true] as const),
      ),
    )
    .strict();
}

const timestamp = z.iso.datetime({ precision: 3 }).openapi({ description: "When the event happened, ISO 8601 UTC with milliseconds" });

/** The exact body of a delivery of `event` (interface §6, extensions §E1.4): closed, every field required. */
export function deliveryBodySchema(entity: RecordEntity, action: EventAction) {
  const data = recordEventDataSchema(entity);
  const base = { event: z.literal(eventName(entity, action)), data };
  if (action !== "updated") return z.object({ ...base, businessId: z.string(), timestamp }).strict();
  const previousAttributes = data.omit({ updatedAt: true }).partial().strict();
  return z.object({ ...base, previousAttributes, businessId: z.string(), timestamp }).strict();
}

const a = (entity: RecordEntity) => (/^[aeiou]/.test(entity) ? `An ${entity}` : `A ${entity}`);
const descriptions: Record<EventAction, (entity: RecordEntity) => string> = {
  created: (e) => `${a(e)} was created; data is the new record.`,
  updated: (e) =>
    `${a(e)} was updated; data is the record after the update, previousAttributes holds each changed field's value before it ` +
    "(items count as one field; recomputed fields such as totalAmount are included; updatedAt is not).",
  deleted: (e) => `${a(e)} was deleted (moved to the trash); data is the record as it was.`,
  restored: (e) =>
    `${a(e)} was restored from the trash; data is the live record.` +
    (e === "client" ? " The contacts its delete removed are restored with it, each with its own contact.restored." : ""),
};

export interface EventType {
  name: EventName;
  entity: RecordEntity;
  action: EventAction;
  description: string;
  /** JSON Schema (draft-07) of the delivery body. */
  schema: Record<string, unknown>;
}

/** The 28 events, in catalogue order. Pure; build it once and keep it (about 10 ms of CPU). */
export function buildEventTypes(): EventType[] {
  return recordEntities.flatMap((entity) =>
    eventActions.map((action) => ({
      name: eventName(entity, action),
      entity,
      action,
      description: descriptions[action](entity),
      schema: z.toJSONSchema(deliveryBodySchema(entity, action), { target: "draft-7", io: "output", unrepresentable: "any" }) as Record<string, unknown>,
    })),
  );
}

/** One entry of GET /api/v1/event-types, for the OpenAPI document. */
export const eventTypeSchema = z
  .object({
    name: z.string().openapi({ example: "invoice.updated" }),
    entity: z.enum(recordEntities),
    action: z.enum(eventActions),
    description: z.string(),
    schema: z.object({}).passthrough().openapi({ description: "JSON Schema (draft-07) of the delivery body of this event" }),
  })
  .openapi("EventType");
