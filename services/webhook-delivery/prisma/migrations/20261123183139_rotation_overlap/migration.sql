-- AlterTable
ALTER TABLE "webhooks"."Webhook" ADD COLUMN     "previousSecret" TEXT,
ADD COLUMN     "previousSecretExpiresAt" TIMESTAMPTZ(3);

