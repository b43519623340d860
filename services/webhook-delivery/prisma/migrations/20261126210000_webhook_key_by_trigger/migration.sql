-- Delivery without its foreign key to Webhook; a statement-level trigger on Webhook deletes a deleted
-- webhook's deliveries (and, through the trigger on Delivery, their attempts), as the key's ON DELETE
-- CASCADE did. The product never deletes a webhook row (DELETE /webhook/{id} deactivates it); this
-- keeps a person's or a later version's delete whole.
--
-- What the key cost: a check per created delivery (SELECT ... FOR KEY SHARE on its Webhook, through
-- SPI), about ten per event on the same few webhook rows.
--
-- Why no delivery can refer to a deleted webhook: the create statements read the webhooks they create
-- deliveries for with FOR KEY SHARE (createForEvents' subscribers, createForEvent's ids), and createTest
-- locks its webhook the same way first: once per webhook per statement, the lock the key's checks took.
-- A delete that commits first: the create's lock waits, finds the row gone and creates nothing for it.
-- A create that commits first: the delete waited for its lock; this trigger's DELETE (a plpgsql
-- statement in READ COMMITTED) takes a new snapshot, which sees the created deliveries.
-- test/webhook-cascade.test.ts holds both orders on PostgreSQL.
-- An older build beside this one creates deliveries without that lock: it could leave a delivery of a
-- webhook deleted at the same moment, which no statement of either build does.
CREATE FUNCTION "webhooks"."delete_deliveries_of_deleted_webhooks"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM "webhooks"."Delivery" AS d USING deleted WHERE d."webhookId" = deleted.id;
  RETURN NULL;
END
$$;
CREATE TRIGGER "Webhook_delete_deliveries" AFTER DELETE ON "webhooks"."Webhook"
  REFERENCING OLD TABLE AS deleted FOR EACH STATEMENT EXECUTE FUNCTION "webhooks"."delete_deliveries_of_deleted_webhooks"();
ALTER TABLE "webhooks"."Delivery" DROP CONSTRAINT "Delivery_webhookId_fkey";
