-- AlterTable
ALTER TABLE "webhooks"."Webhook" ADD COLUMN     "filter" TEXT;

