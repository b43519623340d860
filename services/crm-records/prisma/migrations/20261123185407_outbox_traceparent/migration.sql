-- AlterTable
ALTER TABLE "records"."OutboxEvent" ADD COLUMN     "traceparent" TEXT;

