-- Issue 42: a create sent with an Idempotency-Key claims its key in its own statement or transaction,
-- so a retry after a lost answer finds what the first run created. A new table: additive only.
SET LOCAL lock_timeout = '5s';

-- CreateTable
CREATE TABLE "records"."IdempotentCreate" (
    "businessId" UUID NOT NULL,
    "keyDigest" TEXT NOT NULL,
    "caller" TEXT NOT NULL,
    "fingerprint" TEXT NOT NULL,
    "entity" TEXT NOT NULL,
    "recordIds" UUID[],
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "IdempotentCreate_pkey" PRIMARY KEY ("businessId","keyDigest")
);

-- CreateIndex
CREATE INDEX "IdempotentCreate_createdAt_idx" ON "records"."IdempotentCreate"("createdAt");

