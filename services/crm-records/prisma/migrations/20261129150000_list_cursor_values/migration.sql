-- Issue 39 (extensions §E2.1): a list cursor after a text sort value too long to carry names it by
-- digest, and the product keeps the value here, so the next page continues after it whatever became of
-- the record it came from. Written only for such cursors; deleted by retention. A new table: additive only.
SET LOCAL lock_timeout = '5s';

-- CreateTable
CREATE TABLE "records"."ListCursorValue" (
    "businessId" UUID NOT NULL,
    "digest" TEXT NOT NULL,
    "value" TEXT NOT NULL,
    "storedAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "ListCursorValue_pkey" PRIMARY KEY ("businessId","digest")
);

-- CreateIndex
CREATE INDEX "ListCursorValue_storedAt_idx" ON "records"."ListCursorValue"("storedAt");
