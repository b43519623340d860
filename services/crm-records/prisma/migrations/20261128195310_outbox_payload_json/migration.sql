-- json keeps the envelope as written: its data lists a record's fields in the order GET shows them
-- (jsonb stores keys shortest first, so deliveries and bus events showed another order), and the
-- relay publishes the stored text unchanged. Rows already written keep the order jsonb gave them.
-- AlterTable
ALTER TABLE "records"."OutboxEvent" ALTER COLUMN "payload" SET DATA TYPE JSON;

