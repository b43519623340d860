-- Extensions §E5, the trash: a deleted record keeps its row with "deletedAt" set; a contact its client's
-- delete moved to the trash names that client in "deletedWith", so the client's restore brings back
-- exactly those. Additive only: nullable columns without a default (no table rewrite); the lock wait is
-- bounded. The indexes follow in migrations of their own, built CONCURRENTLY.
SET LOCAL lock_timeout = '5s';

ALTER TABLE "records"."Client" ADD COLUMN "deletedAt" TIMESTAMPTZ(3);
ALTER TABLE "records"."Contact" ADD COLUMN "deletedAt" TIMESTAMPTZ(3);
ALTER TABLE "records"."Invoice" ADD COLUMN "deletedAt" TIMESTAMPTZ(3);
ALTER TABLE "records"."Quote" ADD COLUMN "deletedAt" TIMESTAMPTZ(3);
ALTER TABLE "records"."Product" ADD COLUMN "deletedAt" TIMESTAMPTZ(3);
ALTER TABLE "records"."Service" ADD COLUMN "deletedAt" TIMESTAMPTZ(3);
ALTER TABLE "records"."Employee" ADD COLUMN "deletedAt" TIMESTAMPTZ(3);
ALTER TABLE "records"."Contact" ADD COLUMN "deletedWith" UUID;
