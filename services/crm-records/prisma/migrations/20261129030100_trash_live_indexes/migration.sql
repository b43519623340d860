--! no-transaction
-- The trash (extensions §E5): the indexes a list of live records starts from, partial on live rows, so
-- the default list (deleted=exclude) reads, counts (index only) and skips nothing of the trash. They
-- replace the full ones of the same columns (dropped by 20261129030300_trash_full_indexes_dropped once
-- these are valid). Several index builds in one migration: each is dropped first (IF EXISTS) and built
-- again, so a re-run after a failure rebuilds an INVALID leftover instead of keeping it.
SET lock_timeout = '5s';
DROP INDEX CONCURRENTLY IF EXISTS "records"."Client_live_createdAt_id_idx";
CREATE INDEX CONCURRENTLY IF NOT EXISTS "Client_live_createdAt_id_idx" ON "records"."Client" ("businessId", "createdAt" DESC, "id" DESC) WHERE "deletedAt" IS NULL;
DROP INDEX CONCURRENTLY IF EXISTS "records"."Client_live_isActive_createdAt_id_idx";
CREATE INDEX CONCURRENTLY IF NOT EXISTS "Client_live_isActive_createdAt_id_idx" ON "records"."Client" ("businessId", "isActive", "createdAt" DESC, "id" DESC) WHERE "deletedAt" IS NULL;
DROP INDEX CONCURRENTLY IF EXISTS "records"."Contact_live_createdAt_id_idx";
CREATE INDEX CONCURRENTLY IF NOT EXISTS "Contact_live_createdAt_id_idx" ON "records"."Contact" ("businessId", "createdAt" DESC, "id" DESC) WHERE "deletedAt" IS NULL;
DROP INDEX CONCURRENTLY IF EXISTS "records"."Invoice_live_createdAt_id_idx";
CREATE INDEX CONCURRENTLY IF NOT EXISTS "Invoice_live_createdAt_id_idx" ON "records"."Invoice" ("businessId", "createdAt" DESC, "id" DESC) WHERE "deletedAt" IS NULL;
DROP INDEX CONCURRENTLY IF EXISTS "records"."Invoice_live_status_createdAt_id_idx";
CREATE INDEX CONCURRENTLY IF NOT EXISTS "Invoice_live_status_createdAt_id_idx" ON "records"."Invoice" ("businessId", "status", "createdAt" DESC, "id" DESC) WHERE "deletedAt" IS NULL;
DROP INDEX CONCURRENTLY IF EXISTS "records"."Quote_live_createdAt_id_idx";
CREATE INDEX CONCURRENTLY IF NOT EXISTS "Quote_live_createdAt_id_idx" ON "records"."Quote" ("businessId", "createdAt" DESC, "id" DESC) WHERE "deletedAt" IS NULL;
DROP INDEX CONCURRENTLY IF EXISTS "records"."Quote_live_status_createdAt_id_idx";
CREATE INDEX CONCURRENTLY IF NOT EXISTS "Quote_live_status_createdAt_id_idx" ON "records"."Quote" ("businessId", "status", "createdAt" DESC, "id" DESC) WHERE "deletedAt" IS NULL;
DROP INDEX CONCURRENTLY IF EXISTS "records"."Product_live_createdAt_id_idx";
CREATE INDEX CONCURRENTLY IF NOT EXISTS "Product_live_createdAt_id_idx" ON "records"."Product" ("businessId", "createdAt" DESC, "id" DESC) WHERE "deletedAt" IS NULL;
DROP INDEX CONCURRENTLY IF EXISTS "records"."Product_live_isActive_createdAt_id_idx";
CREATE INDEX CONCURRENTLY IF NOT EXISTS "Product_live_isActive_createdAt_id_idx" ON "records"."Product" ("businessId", "isActive", "createdAt" DESC, "id" DESC) WHERE "deletedAt" IS NULL;
DROP INDEX CONCURRENTLY IF EXISTS "records"."Service_live_createdAt_id_idx";
CREATE INDEX CONCURRENTLY IF NOT EXISTS "Service_live_createdAt_id_idx" ON "records"."Service" ("businessId", "createdAt" DESC, "id" DESC) WHERE "deletedAt" IS NULL;
DROP INDEX CONCURRENTLY IF EXISTS "records"."Service_live_isActive_createdAt_id_idx";
CREATE INDEX CONCURRENTLY IF NOT EXISTS "Service_live_isActive_createdAt_id_idx" ON "records"."Service" ("businessId", "isActive", "createdAt" DESC, "id" DESC) WHERE "deletedAt" IS NULL;
DROP INDEX CONCURRENTLY IF EXISTS "records"."Employee_live_createdAt_id_idx";
CREATE INDEX CONCURRENTLY IF NOT EXISTS "Employee_live_createdAt_id_idx" ON "records"."Employee" ("businessId", "createdAt" DESC, "id" DESC) WHERE "deletedAt" IS NULL;
DROP INDEX CONCURRENTLY IF EXISTS "records"."Employee_live_isActive_createdAt_id_idx";
CREATE INDEX CONCURRENTLY IF NOT EXISTS "Employee_live_isActive_createdAt_id_idx" ON "records"."Employee" ("businessId", "isActive", "createdAt" DESC, "id" DESC) WHERE "deletedAt" IS NULL;
