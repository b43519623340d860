-- A new table and its indexes: nothing reads or writes it yet, so the locks are brief; bounded all the same.
SET LOCAL lock_timeout = '5s';

-- CreateTable
CREATE TABLE "webhooks"."AuditEntry" (
    "id" UUID NOT NULL,
    "businessId" UUID,
    "occurredAt" TIMESTAMPTZ(3) NOT NULL,
    "action" TEXT NOT NULL,
    "actorType" TEXT NOT NULL,
    "actorId" TEXT,
    "actorLabel" TEXT,
    "targetType" TEXT NOT NULL,
    "targetId" TEXT,
    "changes" JSONB,
    "requestId" TEXT,
    "ip" TEXT,
    "userAgent" TEXT,

    CONSTRAINT "AuditEntry_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "AuditEntry_businessId_occurredAt_id_idx" ON "webhooks"."AuditEntry"("businessId", "occurredAt" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "AuditEntry_businessId_action_occurredAt_id_idx" ON "webhooks"."AuditEntry"("businessId", "action", "occurredAt" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "AuditEntry_businessId_actorId_occurredAt_id_idx" ON "webhooks"."AuditEntry"("businessId", "actorId", "occurredAt" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "AuditEntry_businessId_targetType_targetId_occurredAt_id_idx" ON "webhooks"."AuditEntry"("businessId", "targetType", "targetId", "occurredAt" DESC, "id" DESC);

