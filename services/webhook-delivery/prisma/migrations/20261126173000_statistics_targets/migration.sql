-- ANALYZE samples 300 rows per unit of the largest statistics target among a table's columns: 30,000
-- rows at the default 100, which is every row of a delivery table of that size, and embedded PGlite
-- runs its own ANALYZE on the thread that answers every statement (16% of that thread in
-- bench:delivery, docs/performance.md). Target 10 samples 3,000 rows (ANALYZE of 32,000 deliveries:
-- 299-349 ms -> 18-23 ms on PostgreSQL). The claims of first attempts read their index whatever these
-- statistics say (migration 20261126170000_first_attempts_index_only); the other statements find their
-- rows by key. 0 on the bodies: nothing filters, joins or groups on them. A new column of these
-- tables needs a target too (test/statistics-targets.test.ts).
ALTER TABLE "webhooks"."Delivery"
  ALTER COLUMN "id" SET STATISTICS 10,
  ALTER COLUMN "webhookId" SET STATISTICS 10,
  ALTER COLUMN "businessId" SET STATISTICS 10,
  ALTER COLUMN "eventId" SET STATISTICS 10,
  ALTER COLUMN "event" SET STATISTICS 10,
  ALTER COLUMN "status" SET STATISTICS 10,
  ALTER COLUMN "attempt" SET STATISTICS 10,
  ALTER COLUMN "responseStatus" SET STATISTICS 10,
  ALTER COLUMN "responseBody" SET STATISTICS 0,
  ALTER COLUMN "nextRetryAt" SET STATISTICS 10,
  ALTER COLUMN "manualRetry" SET STATISTICS 10,
  ALTER COLUMN "createdAt" SET STATISTICS 10,
  ALTER COLUMN "updatedAt" SET STATISTICS 10,
  ALTER COLUMN "payloadId" SET STATISTICS 10,
  ALTER COLUMN "leaseUntil" SET STATISTICS 10;
ALTER TABLE "webhooks"."DeliveryAttempt"
  ALTER COLUMN "deliveryId" SET STATISTICS 10,
  ALTER COLUMN "attempt" SET STATISTICS 10,
  ALTER COLUMN "manual" SET STATISTICS 10,
  ALTER COLUMN "succeeded" SET STATISTICS 10,
  ALTER COLUMN "responseStatus" SET STATISTICS 10,
  ALTER COLUMN "responseBody" SET STATISTICS 0,
  ALTER COLUMN "durationMs" SET STATISTICS 10,
  ALTER COLUMN "createdAt" SET STATISTICS 10;
ALTER TABLE "webhooks"."Payload"
  ALTER COLUMN "id" SET STATISTICS 10,
  ALTER COLUMN "eventId" SET STATISTICS 10,
  ALTER COLUMN "body" SET STATISTICS 0,
  ALTER COLUMN "createdAt" SET STATISTICS 10;
