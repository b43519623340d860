--! no-transaction
-- The trash's own indexes (extensions §E5): a business's trash in the default order (deleted=only), and
-- every business's trash by age, for the retention purge (TRASH_RETENTION_DAYS). Both hold trashed rows
-- only, so they stay as small as the trash. Re-run safe as 20261129030100_trash_live_indexes is.
SET lock_timeout = '5s';
DROP INDEX CONCURRENTLY IF EXISTS "records"."Client_trash_createdAt_id_idx";
CREATE INDEX CONCURRENTLY IF NOT EXISTS "Client_trash_createdAt_id_idx" ON "records"."Client" ("businessId", "createdAt" DESC, "id" DESC) WHERE "deletedAt" IS NOT NULL;
DROP INDEX CONCURRENTLY IF EXISTS "records"."Client_trash_deletedAt_idx";
CREATE INDEX CONCURRENTLY IF NOT EXISTS "Client_trash_deletedAt_idx" ON "records"."Client" ("deletedAt") WHERE "deletedAt" IS NOT NULL;
DROP INDEX CONCURRENTLY IF EXISTS "records"."Contact_trash_createdAt_id_idx";
CREATE INDEX CONCURRENTLY IF NOT EXISTS "Contact_trash_createdAt_id_idx" ON "records"."Contact" ("businessId", "createdAt" DESC, "id" DESC) WHERE "deletedAt" IS NOT NULL;
DROP INDEX CONCURRENTLY IF EXISTS "records"."Contact_trash_deletedAt_idx";
CREATE INDEX CONCURRENTLY IF NOT EXISTS "Contact_trash_deletedAt_idx" ON "records"."Contact" ("deletedAt") WHERE "deletedAt" IS NOT NULL;
DROP INDEX CONCURRENTLY IF EXISTS "records"."Invoice_trash_createdAt_id_idx";
CREATE INDEX CONCURRENTLY IF NOT EXISTS "Invoice_trash_createdAt_id_idx" ON "records"."Invoice" ("businessId", "createdAt" DESC, "id" DESC) WHERE "deletedAt" IS NOT NULL;
DROP INDEX CONCURRENTLY IF EXISTS "records"."Invoice_trash_deletedAt_idx";
CREATE INDEX CONCURRENTLY IF NOT EXISTS "Invoice_trash_deletedAt_idx" ON "records"."Invoice" ("deletedAt") WHERE "deletedAt" IS NOT NULL;
DROP INDEX CONCURRENTLY IF EXISTS "records"."Quote_trash_createdAt_id_idx";
CREATE INDEX CONCURRENTLY IF NOT EXISTS "Quote_trash_createdAt_id_idx" ON "records"."Quote" ("businessId", "createdAt" DESC, "id" DESC) WHERE "deletedAt" IS NOT NULL;
DROP INDEX CONCURRENTLY IF EXISTS "records"."Quote_trash_deletedAt_idx";
CREATE INDEX CONCURRENTLY IF NOT EXISTS "Quote_trash_deletedAt_idx" ON "records"."Quote" ("deletedAt") WHERE "deletedAt" IS NOT NULL;
DROP INDEX CONCURRENTLY IF EXISTS "records"."Product_trash_createdAt_id_idx";
CREATE INDEX CONCURRENTLY IF NOT EXISTS "Product_trash_createdAt_id_idx" ON "records"."Product" ("businessId", "createdAt" DESC, "id" DESC) WHERE "deletedAt" IS NOT NULL;
DROP INDEX CONCURRENTLY IF EXISTS "records"."Product_trash_deletedAt_idx";
CREATE INDEX CONCURRENTLY IF NOT EXISTS "Product_trash_deletedAt_idx" ON "records"."Product" ("deletedAt") WHERE "deletedAt" IS NOT NULL;
DROP INDEX CONCURRENTLY IF EXISTS "records"."Service_trash_createdAt_id_idx";
CREATE INDEX CONCURRENTLY IF NOT EXISTS "Service_trash_createdAt_id_idx" ON "records"."Service" ("businessId", "createdAt" DESC, "id" DESC) WHERE "deletedAt" IS NOT NULL;
DROP INDEX CONCURRENTLY IF EXISTS "records"."Service_trash_deletedAt_idx";
CREATE INDEX CONCURRENTLY IF NOT EXISTS "Service_trash_deletedAt_idx" ON "records"."Service" ("deletedAt") WHERE "deletedAt" IS NOT NULL;
DROP INDEX CONCURRENTLY IF EXISTS "records"."Employee_trash_createdAt_id_idx";
CREATE INDEX CONCURRENTLY IF NOT EXISTS "Employee_trash_createdAt_id_idx" ON "records"."Employee" ("businessId", "createdAt" DESC, "id" DESC) WHERE "deletedAt" IS NOT NULL;
DROP INDEX CONCURRENTLY IF EXISTS "records"."Employee_trash_deletedAt_idx";
CREATE INDEX CONCURRENTLY IF NOT EXISTS "Employee_trash_deletedAt_idx" ON "records"."Employee" ("deletedAt") WHERE "deletedAt" IS NOT NULL;
