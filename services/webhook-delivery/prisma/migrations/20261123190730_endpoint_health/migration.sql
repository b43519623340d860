-- AlterTable
ALTER TABLE "webhooks"."Webhook" ADD COLUMN     "autoDisableAfter" INTEGER,
ADD COLUMN     "consecutiveFailures" INTEGER NOT NULL DEFAULT 0,
ADD COLUMN     "deactivatedAt" TIMESTAMPTZ(3),
ADD COLUMN     "disabledReason" TEXT,
ADD COLUMN     "lastFailureAt" TIMESTAMPTZ(3),
ADD COLUMN     "lastSuccessAt" TIMESTAMPTZ(3);

