-- Extensions §E6, the change feed: the outbox is the events' history. The relay gives each row it
-- publishes the next feed position, in the order it publishes them, taking the one counter row's lock
-- in the same statement, so positions commit in the order they are given and a reader never sees one
-- before every earlier one (docs/performance.md, D33). FeedHorizon keeps, per business, the highest
-- position retention has deleted: a cursor below it may have missed events (410000).
-- Additive only: a nullable column, two new tables; the lock wait is bounded.
SET LOCAL lock_timeout = '5s';

-- AlterTable
ALTER TABLE "records"."OutboxEvent" ADD COLUMN     "feedPosition" BIGINT;

-- CreateTable
CREATE TABLE "records"."FeedCounter" (
    "id" INTEGER NOT NULL,
    "last" BIGINT NOT NULL,

    CONSTRAINT "FeedCounter_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "records"."FeedHorizon" (
    "businessId" TEXT NOT NULL,
    "position" BIGINT NOT NULL,

    CONSTRAINT "FeedHorizon_pkey" PRIMARY KEY ("businessId")
);

INSERT INTO "records"."FeedCounter" ("id", "last") VALUES (1, 0);

-- The feed's index is built CONCURRENTLY by the next migration, outside a transaction.
