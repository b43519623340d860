-- A claim's lease moves out of "nextRetryAt" into a column of its own that no index holds, so
-- claiming a delivery (and renewing its lease) changes no indexed column and PostgreSQL can update
-- the row in place on its page (a HOT update): no new entry in any of its 6 indexes. Until now every
-- claim wrote one in each (docs/performance.md, "Ninth round").
-- Null when nobody holds the delivery. Rows leased by an older build keep their lease in
-- "nextRetryAt": they become due when it ends, as after a crash (nothing sent twice). An older build
-- must not keep running beside a newer one: it does not see "leaseUntil", so it would claim (and send)
-- a delivery a newer instance holds. Stop the old instances, then start the new ones.
ALTER TABLE "webhooks"."Delivery" ADD COLUMN "leaseUntil" TIMESTAMPTZ(3);

-- Room on each page for the claimed row's new version: a HOT update needs it on the row's own page.
-- Applies to pages filled from now on (existing ones are left as they are).
ALTER TABLE "webhooks"."Delivery" SET (fillfactor = 70);
