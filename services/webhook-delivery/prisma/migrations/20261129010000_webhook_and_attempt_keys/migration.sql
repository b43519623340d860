-- D24 goes for these two relations (docs/performance.md: measured again on the distributed path, the
-- triggers bought nothing over the keys): DeliveryAttempt's key to Delivery and Delivery's key to Webhook
-- come back, both ON DELETE CASCADE as before migrations 20261126200000_attempts_without_foreign_key and
-- 20261126210000_webhook_key_by_trigger, and their triggers go. NOT VALID: added without reading either
-- table (the next migration validates them); enforced from now on, cascades included, so dropping the
-- triggers in the same transaction leaves no delete uncascaded. Delivery's key to Payload stays a trigger
-- (migration 20261126203000_payload_key_checked_on_delete): its delete check would need an index on
-- ("payloadId"), which D25 removed. Runs beside an older build: its statements are the same.
SET LOCAL lock_timeout = '5s';
ALTER TABLE "webhooks"."DeliveryAttempt" ADD CONSTRAINT "DeliveryAttempt_deliveryId_fkey" FOREIGN KEY ("deliveryId") REFERENCES "webhooks"."Delivery"("id") ON DELETE CASCADE ON UPDATE CASCADE NOT VALID;
ALTER TABLE "webhooks"."Delivery" ADD CONSTRAINT "Delivery_webhookId_fkey" FOREIGN KEY ("webhookId") REFERENCES "webhooks"."Webhook"("id") ON DELETE CASCADE ON UPDATE CASCADE NOT VALID;
DROP TRIGGER "Delivery_delete_attempts" ON "webhooks"."Delivery";
DROP FUNCTION "webhooks"."delete_attempts_of_deleted_deliveries"();
DROP TRIGGER "Webhook_delete_deliveries" ON "webhooks"."Webhook";
DROP FUNCTION "webhooks"."delete_deliveries_of_deleted_webhooks"();
