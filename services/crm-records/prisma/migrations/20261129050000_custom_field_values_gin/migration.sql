--! no-transaction
-- Extensions §E4: a list's `eq` on a custom field is jsonb containment ("customFields" @> {"key": value}),
-- which a GIN index with jsonb_path_ops answers for every key and type at once (a multiSelect option
-- too), whatever keys each business defines (docs/performance.md D35). One per record table, on all
-- rows so trash lists use it too. fastupdate off: a search never reads a pending list, which until vacuum
-- merges it (up to gin_pending_list_limit, 4 MB) cost every eq 5-18 ms at 100,000 records; an insert pays
-- ~20 us per five values instead. Prisma cannot declare the storage parameter (schema.prisma says so).
-- Built CONCURRENTLY, each dropped first (IF EXISTS) so that a re-run after a failure rebuilds an INVALID
-- leftover instead of keeping it.
SET lock_timeout = '5s';
DROP INDEX CONCURRENTLY IF EXISTS "records"."Client_customFields_idx";
CREATE INDEX CONCURRENTLY IF NOT EXISTS "Client_customFields_idx" ON "records"."Client" USING GIN ("customFields" jsonb_path_ops) WITH (fastupdate = off);
DROP INDEX CONCURRENTLY IF EXISTS "records"."Contact_customFields_idx";
CREATE INDEX CONCURRENTLY IF NOT EXISTS "Contact_customFields_idx" ON "records"."Contact" USING GIN ("customFields" jsonb_path_ops) WITH (fastupdate = off);
DROP INDEX CONCURRENTLY IF EXISTS "records"."Invoice_customFields_idx";
CREATE INDEX CONCURRENTLY IF NOT EXISTS "Invoice_customFields_idx" ON "records"."Invoice" USING GIN ("customFields" jsonb_path_ops) WITH (fastupdate = off);
DROP INDEX CONCURRENTLY IF EXISTS "records"."Quote_customFields_idx";
CREATE INDEX CONCURRENTLY IF NOT EXISTS "Quote_customFields_idx" ON "records"."Quote" USING GIN ("customFields" jsonb_path_ops) WITH (fastupdate = off);
DROP INDEX CONCURRENTLY IF EXISTS "records"."Product_customFields_idx";
CREATE INDEX CONCURRENTLY IF NOT EXISTS "Product_customFields_idx" ON "records"."Product" USING GIN ("customFields" jsonb_path_ops) WITH (fastupdate = off);
DROP INDEX CONCURRENTLY IF EXISTS "records"."Service_customFields_idx";
CREATE INDEX CONCURRENTLY IF NOT EXISTS "Service_customFields_idx" ON "records"."Service" USING GIN ("customFields" jsonb_path_ops) WITH (fastupdate = off);
DROP INDEX CONCURRENTLY IF EXISTS "records"."Employee_customFields_idx";
CREATE INDEX CONCURRENTLY IF NOT EXISTS "Employee_customFields_idx" ON "records"."Employee" USING GIN ("customFields" jsonb_path_ops) WITH (fastupdate = off);
