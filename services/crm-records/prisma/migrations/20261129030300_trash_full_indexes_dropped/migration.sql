--! no-transaction
-- The full indexes the live ones of 20261129030100_trash_live_indexes replace (extensions §E5): lists of
-- live records now use those; a deleted=include list reads both partial sets. Dropped CONCURRENTLY, after
-- their replacements are valid, so no list loses its index meanwhile.
SET lock_timeout = '5s';
DROP INDEX CONCURRENTLY IF EXISTS "records"."Client_businessId_createdAt_id_idx";
DROP INDEX CONCURRENTLY IF EXISTS "records"."Client_businessId_isActive_createdAt_id_idx";
DROP INDEX CONCURRENTLY IF EXISTS "records"."Contact_businessId_createdAt_id_idx";
DROP INDEX CONCURRENTLY IF EXISTS "records"."Invoice_businessId_createdAt_id_idx";
DROP INDEX CONCURRENTLY IF EXISTS "records"."Invoice_businessId_status_createdAt_id_idx";
DROP INDEX CONCURRENTLY IF EXISTS "records"."Quote_businessId_createdAt_id_idx";
DROP INDEX CONCURRENTLY IF EXISTS "records"."Quote_businessId_status_createdAt_id_idx";
DROP INDEX CONCURRENTLY IF EXISTS "records"."Product_businessId_createdAt_id_idx";
DROP INDEX CONCURRENTLY IF EXISTS "records"."Product_businessId_isActive_createdAt_id_idx";
DROP INDEX CONCURRENTLY IF EXISTS "records"."Service_businessId_createdAt_id_idx";
DROP INDEX CONCURRENTLY IF EXISTS "records"."Service_businessId_isActive_createdAt_id_idx";
DROP INDEX CONCURRENTLY IF EXISTS "records"."Employee_businessId_createdAt_id_idx";
DROP INDEX CONCURRENTLY IF EXISTS "records"."Employee_businessId_isActive_createdAt_id_idx";
