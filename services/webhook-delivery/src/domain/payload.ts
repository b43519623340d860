/** What one delivery says happened. `timestamp` is when the event occurred, not when it is sent. */
export interface DeliveryPayload {
  event: string;
  data: unknown;
  /** `{entity}.updated` only: what the update changed (extensions §E1.4); absent on every other event. */
  previousAttributes?: Record<string, unknown>;
  businessId: string;
  timestamp: Date;
}

/**
 * The exact request body of a delivery (interface §6, Delivery request). The result is what gets
 * signed AND sent, byte for byte; store it with the delivery record and re-send it unchanged on every
 * attempt instead of serialising again, so the signature and the receiver's de-duplication stay stable.
 * Field order is fixed (event, data, previousAttributes when present, businessId, timestamp) only for
 * readability; receivers must not rely on it.
 */
export function serializePayload(payload: DeliveryPayload): string {
  // toISOString always gives UTC with exactly three fraction digits ("...T12:00:00.000Z"), which
  // is the "ISO 8601 with milliseconds" the interface asks for; it throws on an invalid Date.
  const timestamp = payload.timestamp.toISOString();
  return JSON.stringify({
    event: payload.event,
    // JSON.stringify would silently drop an undefined `data` key; the field is always present.
    data: payload.data === undefined ? null : payload.data,
    ...(payload.previousAttributes !== undefined && { previousAttributes: payload.previousAttributes }),
    businessId: payload.businessId,
    timestamp,
  });
}
