-- CreateTable
CREATE TABLE "records"."RecordCount" (
    "businessId" UUID NOT NULL,
    "entity" TEXT NOT NULL,
    "slot" INTEGER NOT NULL,
    "count" BIGINT NOT NULL,

    CONSTRAINT "RecordCount_pkey" PRIMARY KEY ("businessId","entity","slot")
);


-- Backfill (added by hand to the generated migration: data, not schema): the records that exist
-- now, in slot 0. Run while no crm-records of an older release is writing (db:deploy before start).
INSERT INTO "records"."RecordCount" ("businessId", "entity", "slot", "count")
SELECT "businessId", 'client', 0, count(*) FROM "records"."Client" GROUP BY "businessId"
UNION ALL SELECT "businessId", 'contact', 0, count(*) FROM "records"."Contact" GROUP BY "businessId"
UNION ALL SELECT "businessId", 'invoice', 0, count(*) FROM "records"."Invoice" GROUP BY "businessId"
UNION ALL SELECT "businessId", 'quote', 0, count(*) FROM "records"."Quote" GROUP BY "businessId"
UNION ALL SELECT "businessId", 'product', 0, count(*) FROM "records"."Product" GROUP BY "businessId"
UNION ALL SELECT "businessId", 'service', 0, count(*) FROM "records"."Service" GROUP BY "businessId"
UNION ALL SELECT "businessId", 'employee', 0, count(*) FROM "records"."Employee" GROUP BY "businessId";
