-- A business's due first attempts, in claim order (AttemptExecutor's backlog pump: status = 'PENDING'
-- AND "businessId" = $1 AND "nextRetryAt" <= $2 ORDER BY "nextRetryAt", id LIMIT $3). Without it the
-- claim read every business's due rows through ("status", "nextRetryAt") and sorted them: 57 ms for
-- 10 rows behind another business's 3,000. Partial: a delivery leaves it with its first attempt.
-- Prisma's schema language cannot declare a partial index, so it lives here only (schema.prisma says so).
CREATE INDEX "Delivery_first_attempts_by_business_idx" ON "webhooks"."Delivery" ("businessId", "nextRetryAt", "id") WHERE "status" = 'PENDING';
