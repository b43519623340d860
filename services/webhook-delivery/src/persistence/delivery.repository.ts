// The delivery records, one object for their callers, made of four concerns, each in its own module with
// the invariants it keeps: delivery-create.ts, delivery-claims.ts, delivery-outcomes.ts, delivery-api.ts
// (their shared types and SQL: delivery-store.ts).
import type { SqlRunner } from "@crm/database";
import type { PrismaClient } from "../generated/prisma/client";
import { DeliveryApi } from "./delivery-api";
import { DeliveryClaims } from "./delivery-claims";
import { DeliveryCreates } from "./delivery-create";
import { DeliveryOutcomes } from "./delivery-outcomes";
import { DeliveryStore } from "./delivery-store";

export type { CreatedForEvents, NewEvent, NewEventDeliveries } from "./delivery-create";
export type { AttemptRecord, AttemptToSend, ClaimedDelivery, StartedAttempt } from "./delivery-store";

/**
 * Delivery records and the claim protocol that lets any number of instances share the work:
 * a due row (status PENDING or RETRYING, nextRetryAt <= now, no lease or an expired one) is claimed
 * by setting its leaseUntil to a lease end under FOR UPDATE SKIP LOCKED, so exactly one instance
 * gets it; every later write about that attempt requires leaseUntil to still hold that lease end.
 * Records created leased also get nextRetryAt = the lease end (no claim scan meets them before it);
 * a claim leaves nextRetryAt alone, so the claim scans step over rows in flight (filtered by
 * leaseUntil), in exchange for claims that write no index entry.
 */
export type DeliveryRepository = DeliveryCreates & DeliveryClaims & DeliveryOutcomes & DeliveryApi;

/** The four concerns' methods on one prototype (TypeScript's mixin pattern): they share the store's connections. */
class Composed extends DeliveryStore {}
for (const concern of [DeliveryCreates, DeliveryClaims, DeliveryOutcomes, DeliveryApi]) {
  for (const name of Object.getOwnPropertyNames(concern.prototype)) {
    if (name !== "constructor") Object.defineProperty(Composed.prototype, name, Object.getOwnPropertyDescriptor(concern.prototype, name)!);
  }
}

export const DeliveryRepository = Composed as unknown as new (prisma: PrismaClient, sql: SqlRunner) => DeliveryRepository;
