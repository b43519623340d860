-- AlterTable
ALTER TABLE "identity"."ApiKey" ADD COLUMN     "lastUsedAt" TIMESTAMPTZ(3);

