-- DropIndex
DROP INDEX "records"."Client_businessId_email_idx";

-- DropIndex
DROP INDEX "records"."Employee_businessId_email_idx";

-- CreateIndex
CREATE INDEX "Client_businessId_lastName_id_idx" ON "records"."Client"("businessId", "lastName", "id");

-- CreateIndex
CREATE INDEX "Client_businessId_firstName_id_idx" ON "records"."Client"("businessId", "firstName", "id");

-- CreateIndex
CREATE INDEX "Client_businessId_updatedAt_id_idx" ON "records"."Client"("businessId", "updatedAt", "id");

-- CreateIndex
CREATE INDEX "Client_businessId_email_id_idx" ON "records"."Client"("businessId", "email", "id");

-- CreateIndex
CREATE INDEX "Contact_businessId_updatedAt_id_idx" ON "records"."Contact"("businessId", "updatedAt", "id");

-- CreateIndex
CREATE INDEX "Employee_businessId_lastName_id_idx" ON "records"."Employee"("businessId", "lastName", "id");

-- CreateIndex
CREATE INDEX "Employee_businessId_firstName_id_idx" ON "records"."Employee"("businessId", "firstName", "id");

-- CreateIndex
CREATE INDEX "Employee_businessId_updatedAt_id_idx" ON "records"."Employee"("businessId", "updatedAt", "id");

-- CreateIndex
CREATE INDEX "Employee_businessId_email_id_idx" ON "records"."Employee"("businessId", "email", "id");

-- CreateIndex
CREATE INDEX "Invoice_businessId_status_id_idx" ON "records"."Invoice"("businessId", "status", "id");

-- CreateIndex
CREATE INDEX "Invoice_businessId_totalAmount_id_idx" ON "records"."Invoice"("businessId", "totalAmount", "id");

-- CreateIndex
CREATE INDEX "Invoice_businessId_updatedAt_id_idx" ON "records"."Invoice"("businessId", "updatedAt", "id");

-- CreateIndex
CREATE INDEX "Product_businessId_name_id_idx" ON "records"."Product"("businessId", "name", "id");

-- CreateIndex
CREATE INDEX "Product_businessId_updatedAt_id_idx" ON "records"."Product"("businessId", "updatedAt", "id");

-- CreateIndex
CREATE INDEX "Quote_businessId_status_id_idx" ON "records"."Quote"("businessId", "status", "id");

-- CreateIndex
CREATE INDEX "Quote_businessId_totalAmount_id_idx" ON "records"."Quote"("businessId", "totalAmount", "id");

-- CreateIndex
CREATE INDEX "Quote_businessId_updatedAt_id_idx" ON "records"."Quote"("businessId", "updatedAt", "id");

-- CreateIndex
CREATE INDEX "Service_businessId_name_id_idx" ON "records"."Service"("businessId", "name", "id");

-- CreateIndex
CREATE INDEX "Service_businessId_updatedAt_id_idx" ON "records"."Service"("businessId", "updatedAt", "id");

