-- The keys of migration 20261129010000_webhook_and_attempt_keys, validated: a scan of each table that
-- blocks no write (SHARE UPDATE EXCLUSIVE). Nothing can fail it: attempts were inserted only from their
-- delivery's update and deliveries only with their webhook held, and the triggers cascaded every delete.
SET LOCAL lock_timeout = '5s';
ALTER TABLE "webhooks"."DeliveryAttempt" VALIDATE CONSTRAINT "DeliveryAttempt_deliveryId_fkey";
ALTER TABLE "webhooks"."Delivery" VALIDATE CONSTRAINT "Delivery_webhookId_fkey";
