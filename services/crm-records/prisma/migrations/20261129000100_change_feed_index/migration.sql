--! no-transaction
-- The change feed's reads (extensions §E6): a business's published rows by feed position. Built
-- CONCURRENTLY so writes to the outbox go on meanwhile; rows get a position only from the previous
-- migration on, so the partial index starts nearly empty. IF NOT EXISTS: a re-run after a failure is harmless.
SET lock_timeout = '5s';
CREATE INDEX CONCURRENTLY IF NOT EXISTS "OutboxEvent_key_feedPosition_idx" ON "records"."OutboxEvent"("key", "feedPosition") WHERE "feedPosition" IS NOT NULL;
