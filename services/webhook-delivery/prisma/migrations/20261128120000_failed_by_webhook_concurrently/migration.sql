--! no-transaction
-- The FAILED deliveries of each webhook, by creation time: what POST /webhook/{id}/recover picks (the
-- oldest 1,000 of a window) and counts (the rest of the window), issue 35 item 8. Through
-- ("webhookId", "createdAt", id) alone both read every delivery of the window, SUCCESS ones included
-- (millions for a busy webhook over 14 days) to find the FAILED ones. Partial: an outcome writes an entry
-- here only when it ends FAILED; SUCCESS, RETRYING and PENDING rows (almost every write) cost nothing.
-- Prisma cannot declare a partial index (schema.prisma says so).
-- Built CONCURRENTLY, outside a transaction (the runner's no-transaction marker above), so delivery
-- writes go on while it reads the table; IF NOT EXISTS makes a re-run after a failure harmless (drop an
-- INVALID index left by a failed build first: docs/operations.md). lock_timeout: the build waits for
-- the transactions already writing the table; if one holds it longer, the migration fails rather than
-- queue every writer behind it.
SET lock_timeout = '10s';
CREATE INDEX CONCURRENTLY IF NOT EXISTS "Delivery_failed_by_webhook_idx" ON "webhooks"."Delivery" ("webhookId", "createdAt", "id") WHERE "status" = 'FAILED';
