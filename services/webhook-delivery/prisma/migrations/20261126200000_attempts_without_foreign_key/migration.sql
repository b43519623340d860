-- DeliveryAttempt without its foreign key to Delivery; a statement-level trigger deletes a deleted
-- delivery's attempts instead (what ON DELETE CASCADE did), for every deleter: retention, the cascade
-- from a deleted Webhook, an older build, a person with psql.
--
-- What the key cost: a check per inserted attempt (SELECT ... FOR KEY SHARE on its Delivery, through
-- SPI), the row the outcome statement has just updated and still holds locked. On PGlite that was
-- ~18% of the outcome statement (6.9 -> 5.7 ms for 88 outcomes, docs/performance.md).
--
-- Why no attempt can be left without its delivery:
-- - Attempts are inserted only by the outcome statement (DeliveryRepository.recordAttempts), from the
--   RETURNING of its UPDATE of the same delivery: no row updated, no attempt. That UPDATE holds the
--   delivery's row lock until the statement commits.
-- - A delete that commits first: the UPDATE (READ COMMITTED) waits for it, finds the row gone, updates
--   nothing and inserts nothing.
-- - An outcome that commits first: the delete waited for its row lock (retention's SKIP LOCKED skips
--   the row instead, and then finds it no longer final or no longer old). Its delete then fires this
--   trigger, whose DELETE (a plpgsql statement in READ COMMITTED) takes a new snapshot, which sees the
--   committed attempt. test/attempts-cascade.test.ts holds both orders on PostgreSQL.
-- An older build running beside this one is served the same way: its retention deletes deliveries and
-- this trigger deletes their attempts; its outcome statement inserts attempts as before.
CREATE FUNCTION "webhooks"."delete_attempts_of_deleted_deliveries"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM "webhooks"."DeliveryAttempt" AS a USING deleted WHERE a."deliveryId" = deleted.id;
  RETURN NULL;
END
$$;
CREATE TRIGGER "Delivery_delete_attempts" AFTER DELETE ON "webhooks"."Delivery"
  REFERENCING OLD TABLE AS deleted FOR EACH STATEMENT EXECUTE FUNCTION "webhooks"."delete_attempts_of_deleted_deliveries"();
ALTER TABLE "webhooks"."DeliveryAttempt" DROP CONSTRAINT "DeliveryAttempt_deliveryId_fkey";
