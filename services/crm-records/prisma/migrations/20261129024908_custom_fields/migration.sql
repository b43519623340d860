-- Extensions §E4, custom fields: each record table gains its values as one jsonb column (constant default:
-- a catalogue-only change, no table rewrite), and three new tables hold the definitions, the per-business
-- definition version, and the values of unique fields (docs/performance.md D34). Additive only; the lock wait is bounded.
SET LOCAL lock_timeout = '5s';

-- AlterTable
ALTER TABLE "records"."Client" ADD COLUMN     "customFields" JSONB NOT NULL DEFAULT '{}';

-- AlterTable
ALTER TABLE "records"."Contact" ADD COLUMN     "customFields" JSONB NOT NULL DEFAULT '{}';

-- AlterTable
ALTER TABLE "records"."Employee" ADD COLUMN     "customFields" JSONB NOT NULL DEFAULT '{}';

-- AlterTable
ALTER TABLE "records"."Invoice" ADD COLUMN     "customFields" JSONB NOT NULL DEFAULT '{}';

-- AlterTable
ALTER TABLE "records"."Product" ADD COLUMN     "customFields" JSONB NOT NULL DEFAULT '{}';

-- AlterTable
ALTER TABLE "records"."Quote" ADD COLUMN     "customFields" JSONB NOT NULL DEFAULT '{}';

-- AlterTable
ALTER TABLE "records"."Service" ADD COLUMN     "customFields" JSONB NOT NULL DEFAULT '{}';

-- CreateTable
CREATE TABLE "records"."CustomFieldDefinition" (
    "businessId" UUID NOT NULL,
    "entity" TEXT NOT NULL,
    "key" TEXT NOT NULL,
    "label" TEXT NOT NULL,
    "description" TEXT,
    "type" TEXT NOT NULL,
    "required" BOOLEAN NOT NULL DEFAULT false,
    "unique" BOOLEAN NOT NULL DEFAULT false,
    "options" JSONB,
    "defaultValue" JSONB,
    "isArchived" BOOLEAN NOT NULL DEFAULT false,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "CustomFieldDefinition_pkey" PRIMARY KEY ("businessId","entity","key")
);

-- CreateTable
CREATE TABLE "records"."CustomFieldVersion" (
    "businessId" UUID NOT NULL,
    "version" BIGINT NOT NULL,

    CONSTRAINT "CustomFieldVersion_pkey" PRIMARY KEY ("businessId")
);

-- CreateTable
CREATE TABLE "records"."CustomFieldUniqueValue" (
    "businessId" UUID NOT NULL,
    "entity" TEXT NOT NULL,
    "key" TEXT NOT NULL,
    "value" TEXT NOT NULL,
    "recordId" UUID NOT NULL,

    CONSTRAINT "CustomFieldUniqueValue_pkey" PRIMARY KEY ("businessId","entity","key","value")
);

-- CreateIndex
CREATE INDEX "CustomFieldUniqueValue_businessId_entity_recordId_idx" ON "records"."CustomFieldUniqueValue"("businessId", "entity", "recordId");

