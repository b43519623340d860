-- The FAILED deliveries of each webhook, by creation time: what POST /webhook/{id}/recover picks (the
-- oldest 1,000 of a window) and counts (the rest of the window), issue 35 item 8. Through
-- ("webhookId", "createdAt", id) alone both read every delivery of the window, SUCCESS ones included
-- (millions for a busy webhook over 14 days) to find the FAILED ones. Partial: an outcome writes an entry
-- here only when it ends FAILED; SUCCESS, RETRYING and PENDING rows (almost every write) cost nothing.
-- Prisma cannot declare a partial index (schema.prisma says so).
CREATE INDEX "Delivery_failed_by_webhook_idx" ON "webhooks"."Delivery" ("webhookId", "createdAt", "id") WHERE "status" = 'FAILED';
