-- Delivery without its foreign key to Payload; a statement-level trigger on Payload refuses to delete a
-- payload a delivery still refers to, as the key's ON DELETE RESTRICT did (same SQLSTATE, 23503).
--
-- What the key cost: a check per created delivery (SELECT ... FOR KEY SHARE on its Payload, through
-- SPI), about ten per event for a payload the same statement has just inserted or upserted (on PGlite
-- ~half of the create statement's two key checks, which together were ~19% of it: docs/performance.md).
--
-- Why no delivery can refer to a missing payload:
-- - Deliveries are created only with their payload, in one statement (createForEvents, createForEvent)
--   or one transaction (createTest): a new payload, not visible to anyone before that commits, or an
--   existing one (a re-delivered event) found through ON CONFLICT DO UPDATE, which holds that payload's
--   row lock until the create commits.
-- - Payloads are deleted by retention only (old, unreferenced, FOR UPDATE SKIP LOCKED): it skips a
--   payload a create holds; a create that wants one retention holds waits, finds it gone, and inserts
--   a new payload for the event (ON CONFLICT's own retry).
-- - A create that committed after retention's snapshot, before its lock: retention's NOT EXISTS, read in
--   that snapshot, misses the new deliveries. This trigger's query (a plpgsql statement in READ
--   COMMITTED) takes a new snapshot, sees them and fails the delete, as the key's check did.
--   test/payload-restrict.test.ts holds that case.
-- An older build beside this one works as before: its creates are the same statements, and its
-- retention's deletes meet this trigger as they met the key.
CREATE FUNCTION "webhooks"."keep_referenced_payloads"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF EXISTS (SELECT 1 FROM deleted JOIN "webhooks"."Delivery" AS d ON d."payloadId" = deleted.id) THEN
    RAISE EXCEPTION 'a payload a delivery refers to cannot be deleted' USING ERRCODE = 'foreign_key_violation';
  END IF;
  RETURN NULL;
END
$$;
CREATE TRIGGER "Payload_keep_referenced" AFTER DELETE ON "webhooks"."Payload"
  REFERENCING OLD TABLE AS deleted FOR EACH STATEMENT EXECUTE FUNCTION "webhooks"."keep_referenced_payloads"();
ALTER TABLE "webhooks"."Delivery" DROP CONSTRAINT "Delivery_payloadId_fkey";
