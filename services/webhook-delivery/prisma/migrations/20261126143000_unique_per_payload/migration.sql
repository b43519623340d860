-- A delivery is unique per (payload, webhook) instead of per (webhook, event), and that one index
-- also serves what the payloadId index did (payload retention, the foreign key's check when a payload
-- goes): one index fewer, so one entry fewer written by every create and by every outcome (an outcome
-- moves status, so it is not a HOT update and writes an entry in every index).
-- The same guarantee: an event has one payload (Payload's unique "eventId"; a re-delivered event finds
-- it), so a re-delivered event meets its (payload, webhook) pair and creates nothing twice. Test
-- deliveries have a payload each. Safe on existing rows: every delivery of one event already shares
-- that event's payload, and (webhook, event) was unique.
CREATE UNIQUE INDEX "Delivery_payloadId_webhookId_key" ON "webhooks"."Delivery"("payloadId", "webhookId");
DROP INDEX "webhooks"."Delivery_webhookId_eventId_key";
DROP INDEX "webhooks"."Delivery_payloadId_idx";
