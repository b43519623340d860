-- CreateSchema
CREATE SCHEMA IF NOT EXISTS "records";

-- CreateEnum
CREATE TYPE "records"."ContactType" AS ENUM ('EMAIL', 'PHONE', 'MOBILE', 'WEBSITE', 'OTHER');

-- CreateEnum
CREATE TYPE "records"."InvoiceStatus" AS ENUM ('DRAFT', 'SENT', 'PAID', 'OVERDUE', 'VOID');

-- CreateEnum
CREATE TYPE "records"."QuoteStatus" AS ENUM ('DRAFT', 'SENT', 'ACCEPTED', 'DECLINED', 'EXPIRED');

-- CreateTable
CREATE TABLE "records"."Client" (
    "id" UUID NOT NULL,
    "businessId" UUID NOT NULL,
    "firstName" TEXT NOT NULL,
    "lastName" TEXT NOT NULL,
    "email" TEXT,
    "phone" TEXT,
    "companyName" TEXT,
    "notes" TEXT,
    "isActive" BOOLEAN NOT NULL DEFAULT true,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "Client_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "records"."Contact" (
    "id" UUID NOT NULL,
    "businessId" UUID NOT NULL,
    "clientId" UUID NOT NULL,
    "type" "records"."ContactType" NOT NULL,
    "value" TEXT NOT NULL,
    "isPrimary" BOOLEAN NOT NULL DEFAULT false,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "Contact_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "records"."Invoice" (
    "id" UUID NOT NULL,
    "businessId" UUID NOT NULL,
    "number" TEXT NOT NULL,
    "clientId" UUID NOT NULL,
    "status" "records"."InvoiceStatus" NOT NULL DEFAULT 'DRAFT',
    "currency" VARCHAR(3) NOT NULL DEFAULT 'USD',
    "issueDate" TIMESTAMPTZ(3),
    "dueDate" TIMESTAMPTZ(3),
    "notes" TEXT,
    "totalAmount" DECIMAL(30,2) NOT NULL,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "Invoice_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "records"."InvoiceItem" (
    "invoiceId" UUID NOT NULL,
    "position" INTEGER NOT NULL,
    "description" TEXT NOT NULL,
    "quantity" DECIMAL(15,4) NOT NULL,
    "unitPrice" DECIMAL(15,4) NOT NULL,

    CONSTRAINT "InvoiceItem_pkey" PRIMARY KEY ("invoiceId","position")
);

-- CreateTable
CREATE TABLE "records"."Quote" (
    "id" UUID NOT NULL,
    "businessId" UUID NOT NULL,
    "number" TEXT NOT NULL,
    "clientId" UUID NOT NULL,
    "status" "records"."QuoteStatus" NOT NULL DEFAULT 'DRAFT',
    "currency" VARCHAR(3) NOT NULL DEFAULT 'USD',
    "validUntil" TIMESTAMPTZ(3),
    "notes" TEXT,
    "totalAmount" DECIMAL(30,2) NOT NULL,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "Quote_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "records"."QuoteItem" (
    "quoteId" UUID NOT NULL,
    "position" INTEGER NOT NULL,
    "description" TEXT NOT NULL,
    "quantity" DECIMAL(15,4) NOT NULL,
    "unitPrice" DECIMAL(15,4) NOT NULL,

    CONSTRAINT "QuoteItem_pkey" PRIMARY KEY ("quoteId","position")
);

-- CreateTable
CREATE TABLE "records"."Product" (
    "id" UUID NOT NULL,
    "businessId" UUID NOT NULL,
    "name" TEXT NOT NULL,
    "description" TEXT,
    "sku" TEXT,
    "unitPrice" DECIMAL(15,4) NOT NULL DEFAULT 0,
    "currency" VARCHAR(3) NOT NULL DEFAULT 'USD',
    "isActive" BOOLEAN NOT NULL DEFAULT true,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "Product_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "records"."Service" (
    "id" UUID NOT NULL,
    "businessId" UUID NOT NULL,
    "name" TEXT NOT NULL,
    "description" TEXT,
    "unitPrice" DECIMAL(15,4) NOT NULL DEFAULT 0,
    "unit" TEXT,
    "isActive" BOOLEAN NOT NULL DEFAULT true,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "Service_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "records"."Employee" (
    "id" UUID NOT NULL,
    "businessId" UUID NOT NULL,
    "firstName" TEXT NOT NULL,
    "lastName" TEXT NOT NULL,
    "email" TEXT,
    "phone" TEXT,
    "position" TEXT,
    "isActive" BOOLEAN NOT NULL DEFAULT true,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "Employee_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "records"."DocumentCounter" (
    "businessId" UUID NOT NULL,
    "kind" TEXT NOT NULL,
    "next" INTEGER NOT NULL,

    CONSTRAINT "DocumentCounter_pkey" PRIMARY KEY ("businessId","kind")
);

-- CreateTable
CREATE TABLE "records"."OutboxEvent" (
    "sequence" BIGSERIAL NOT NULL,
    "id" UUID NOT NULL,
    "topic" TEXT NOT NULL,
    "key" TEXT NOT NULL,
    "payload" JSONB NOT NULL,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "sentAt" TIMESTAMPTZ(3),

    CONSTRAINT "OutboxEvent_pkey" PRIMARY KEY ("sequence")
);

-- CreateTable
CREATE TABLE "records"."OutboxLease" (
    "name" TEXT NOT NULL,
    "holder" TEXT NOT NULL,
    "expiresAt" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "OutboxLease_pkey" PRIMARY KEY ("name")
);

-- CreateIndex
CREATE INDEX "Client_businessId_createdAt_id_idx" ON "records"."Client"("businessId", "createdAt" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "Client_businessId_isActive_createdAt_id_idx" ON "records"."Client"("businessId", "isActive", "createdAt" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "Client_businessId_email_idx" ON "records"."Client"("businessId", "email");

-- CreateIndex
CREATE UNIQUE INDEX "Client_businessId_id_key" ON "records"."Client"("businessId", "id");

-- CreateIndex
CREATE INDEX "Contact_businessId_createdAt_id_idx" ON "records"."Contact"("businessId", "createdAt" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "Contact_businessId_clientId_createdAt_id_idx" ON "records"."Contact"("businessId", "clientId", "createdAt" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "Invoice_businessId_createdAt_id_idx" ON "records"."Invoice"("businessId", "createdAt" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "Invoice_businessId_status_createdAt_id_idx" ON "records"."Invoice"("businessId", "status", "createdAt" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "Invoice_businessId_clientId_createdAt_id_idx" ON "records"."Invoice"("businessId", "clientId", "createdAt" DESC, "id" DESC);

-- CreateIndex
CREATE UNIQUE INDEX "Invoice_businessId_number_key" ON "records"."Invoice"("businessId", "number");

-- CreateIndex
CREATE INDEX "Quote_businessId_createdAt_id_idx" ON "records"."Quote"("businessId", "createdAt" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "Quote_businessId_status_createdAt_id_idx" ON "records"."Quote"("businessId", "status", "createdAt" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "Quote_businessId_clientId_createdAt_id_idx" ON "records"."Quote"("businessId", "clientId", "createdAt" DESC, "id" DESC);

-- CreateIndex
CREATE UNIQUE INDEX "Quote_businessId_number_key" ON "records"."Quote"("businessId", "number");

-- CreateIndex
CREATE INDEX "Product_businessId_createdAt_id_idx" ON "records"."Product"("businessId", "createdAt" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "Product_businessId_isActive_createdAt_id_idx" ON "records"."Product"("businessId", "isActive", "createdAt" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "Service_businessId_createdAt_id_idx" ON "records"."Service"("businessId", "createdAt" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "Service_businessId_isActive_createdAt_id_idx" ON "records"."Service"("businessId", "isActive", "createdAt" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "Employee_businessId_createdAt_id_idx" ON "records"."Employee"("businessId", "createdAt" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "Employee_businessId_isActive_createdAt_id_idx" ON "records"."Employee"("businessId", "isActive", "createdAt" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "Employee_businessId_email_idx" ON "records"."Employee"("businessId", "email");

-- CreateIndex
CREATE UNIQUE INDEX "OutboxEvent_id_key" ON "records"."OutboxEvent"("id");

-- CreateIndex
CREATE INDEX "OutboxEvent_sentAt_sequence_idx" ON "records"."OutboxEvent"("sentAt", "sequence");

-- AddForeignKey
ALTER TABLE "records"."Contact" ADD CONSTRAINT "Contact_businessId_clientId_fkey" FOREIGN KEY ("businessId", "clientId") REFERENCES "records"."Client"("businessId", "id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "records"."Invoice" ADD CONSTRAINT "Invoice_businessId_clientId_fkey" FOREIGN KEY ("businessId", "clientId") REFERENCES "records"."Client"("businessId", "id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "records"."InvoiceItem" ADD CONSTRAINT "InvoiceItem_invoiceId_fkey" FOREIGN KEY ("invoiceId") REFERENCES "records"."Invoice"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "records"."Quote" ADD CONSTRAINT "Quote_businessId_clientId_fkey" FOREIGN KEY ("businessId", "clientId") REFERENCES "records"."Client"("businessId", "id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "records"."QuoteItem" ADD CONSTRAINT "QuoteItem_quoteId_fkey" FOREIGN KEY ("quoteId") REFERENCES "records"."Quote"("id") ON DELETE CASCADE ON UPDATE CASCADE;

