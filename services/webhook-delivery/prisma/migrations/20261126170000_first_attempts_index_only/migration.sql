-- The first-attempts index again, with its predicate written `"status" IS NOT DISTINCT FROM 'PENDING'`
-- (the same rows: status is NOT NULL), as the claims of first attempts now write it. ("status",
-- "nextRetryAt") cannot take IS NOT DISTINCT FROM as an index condition, so this index is the only one
-- that serves those claims, whatever the last ANALYZE saw. With `= 'PENDING'`, the claims' generic
-- plans (chosen again after every ANALYZE) read every business's due first attempts through ("status",
-- "nextRetryAt") and sorted them whenever ANALYZE had seen (almost) no PENDING row (docs/performance.md,
-- thirteenth round). Same name and columns; Prisma cannot declare a partial index (schema.prisma says so).
CREATE INDEX "Delivery_first_attempts_new_idx" ON "webhooks"."Delivery" ("businessId", "nextRetryAt", "id") WHERE "status" IS NOT DISTINCT FROM 'PENDING';
DROP INDEX "webhooks"."Delivery_first_attempts_by_business_idx";
ALTER INDEX "webhooks"."Delivery_first_attempts_new_idx" RENAME TO "Delivery_first_attempts_by_business_idx";
