-- The relay's pending read walks this index in sequence order and stops at its LIMIT, whatever the
-- table's statistics say; a plain index scan also marks the entries of rows already sent as dead, so
-- later reads skip them before VACUUM runs. Only unsent, not dead-lettered rows are in it: a mark adds
-- no entry here. ("sentAt", sequence) stays for retention. Prisma cannot declare a partial index.
CREATE INDEX "OutboxEvent_pending_idx" ON "records"."OutboxEvent" ("sequence") WHERE "sentAt" IS NULL AND "deadLetteredAt" IS NULL;
