-- ("status", "nextRetryAt") holds only the work owed (PENDING and RETRYING rows): the only rows read
-- through it (the retry cycle's claim, the retries-due gauge). An outcome moves status, so it is never a
-- HOT update and writes an entry in every index whose predicate its new row meets: a SUCCESS or FAILED
-- outcome (almost every delivery's last) now writes none here, 3 index entries instead of 4.
-- Delivery retention, which read SUCCESS and FAILED rows through it, walks ("webhookId", "createdAt")
-- instead, webhook by webhook (a delivery's createdAt is never after its updatedAt).
-- Same name and columns; Prisma cannot declare a partial index (schema.prisma says so). An older build
-- beside this one works: its statements are the same, its retention reads the table instead of an index.
CREATE INDEX "Delivery_status_nextRetryAt_new_idx" ON "webhooks"."Delivery" ("status", "nextRetryAt") WHERE "status" IN ('PENDING', 'RETRYING');
DROP INDEX "webhooks"."Delivery_status_nextRetryAt_idx";
ALTER INDEX "webhooks"."Delivery_status_nextRetryAt_new_idx" RENAME TO "Delivery_status_nextRetryAt_idx";
