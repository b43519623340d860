-- AlterTable
ALTER TABLE "records"."OutboxEvent" ADD COLUMN     "deadLetterError" TEXT,
ADD COLUMN     "deadLetteredAt" TIMESTAMPTZ(3);

