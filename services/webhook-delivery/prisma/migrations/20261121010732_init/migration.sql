-- CreateSchema
CREATE SCHEMA IF NOT EXISTS "webhooks";

-- CreateEnum
CREATE TYPE "webhooks"."DeliveryStatus" AS ENUM ('PENDING', 'SUCCESS', 'RETRYING', 'FAILED');

-- CreateTable
CREATE TABLE "webhooks"."Webhook" (
    "id" UUID NOT NULL,
    "businessId" TEXT NOT NULL,
    "url" TEXT NOT NULL,
    "events" TEXT[],
    "description" TEXT NOT NULL DEFAULT '',
    "secret" TEXT NOT NULL,
    "secretPrefix" TEXT NOT NULL,
    "isActive" BOOLEAN NOT NULL DEFAULT true,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "Webhook_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "webhooks"."Delivery" (
    "id" UUID NOT NULL,
    "webhookId" UUID NOT NULL,
    "businessId" TEXT NOT NULL,
    "eventId" TEXT,
    "event" TEXT NOT NULL,
    "payload" TEXT NOT NULL,
    "status" "webhooks"."DeliveryStatus" NOT NULL DEFAULT 'PENDING',
    "attempt" INTEGER NOT NULL DEFAULT 0,
    "responseStatus" INTEGER,
    "responseBody" TEXT,
    "nextRetryAt" TIMESTAMPTZ(3),
    "manualRetry" BOOLEAN NOT NULL DEFAULT false,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "Delivery_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "webhooks"."DeliveryAttempt" (
    "id" UUID NOT NULL,
    "deliveryId" UUID NOT NULL,
    "attempt" INTEGER NOT NULL,
    "manual" BOOLEAN NOT NULL,
    "succeeded" BOOLEAN NOT NULL,
    "responseStatus" INTEGER NOT NULL,
    "responseBody" TEXT NOT NULL,
    "durationMs" INTEGER NOT NULL,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "DeliveryAttempt_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "Webhook_businessId_createdAt_id_idx" ON "webhooks"."Webhook"("businessId", "createdAt" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "Webhook_businessId_isActive_idx" ON "webhooks"."Webhook"("businessId", "isActive");

-- CreateIndex
CREATE INDEX "Delivery_status_nextRetryAt_idx" ON "webhooks"."Delivery"("status", "nextRetryAt");

-- CreateIndex
CREATE INDEX "Delivery_webhookId_createdAt_id_idx" ON "webhooks"."Delivery"("webhookId", "createdAt" DESC, "id" DESC);

-- CreateIndex
CREATE UNIQUE INDEX "Delivery_webhookId_eventId_key" ON "webhooks"."Delivery"("webhookId", "eventId");

-- CreateIndex
CREATE UNIQUE INDEX "DeliveryAttempt_deliveryId_attempt_key" ON "webhooks"."DeliveryAttempt"("deliveryId", "attempt");

-- AddForeignKey
ALTER TABLE "webhooks"."Delivery" ADD CONSTRAINT "Delivery_webhookId_fkey" FOREIGN KEY ("webhookId") REFERENCES "webhooks"."Webhook"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "webhooks"."DeliveryAttempt" ADD CONSTRAINT "DeliveryAttempt_deliveryId_fkey" FOREIGN KEY ("deliveryId") REFERENCES "webhooks"."Delivery"("id") ON DELETE CASCADE ON UPDATE CASCADE;

