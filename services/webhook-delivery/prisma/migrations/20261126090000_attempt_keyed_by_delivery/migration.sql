-- An attempt is identified by its delivery and its number: the unique index on ("deliveryId",
-- "attempt") becomes the primary key, and the uuid "id" (its own index, one more entry written by
-- every attempt; read by nothing, shown by no API) goes. Safe on existing rows: both columns are NOT
-- NULL and the unique index already holds every row once; USING INDEX reuses it (renamed to
-- "DeliveryAttempt_pkey") instead of building another.
ALTER TABLE "webhooks"."DeliveryAttempt" DROP CONSTRAINT "DeliveryAttempt_pkey";
ALTER TABLE "webhooks"."DeliveryAttempt" DROP COLUMN "id";
ALTER TABLE "webhooks"."DeliveryAttempt" ADD CONSTRAINT "DeliveryAttempt_pkey" PRIMARY KEY USING INDEX "DeliveryAttempt_deliveryId_attempt_key";
