-- Extensions §E4: the sort values of custom fields (docs/performance.md D35; custom-field-sort.ts keeps
-- them in the records' own writes). A new table and its indexes, then one row per existing record and
-- sortable (non-multiSelect) definition of its entity, from the record's stored values, by the same
-- expression as custom-field-sort.ts (sortColumnsSql). The backfill only reads the record tables
-- (no lock that blocks their writers); the lock wait is bounded.
SET LOCAL lock_timeout = '5s';

-- CreateTable
CREATE TABLE "records"."CustomFieldSortValue" (
    "businessId" UUID NOT NULL,
    "entity" TEXT NOT NULL,
    "key" TEXT NOT NULL,
    "recordId" UUID NOT NULL,
    "absent" BOOLEAN NOT NULL,
    "number" DECIMAL NOT NULL,
    "text" TEXT NOT NULL,

    CONSTRAINT "CustomFieldSortValue_pkey" PRIMARY KEY ("businessId","entity","recordId","key")
);

-- CreateIndex
CREATE INDEX "CustomFieldSortValue_sort_idx" ON "records"."CustomFieldSortValue"("businessId", "entity", "key", "absent", "number", "text", "recordId");


-- Backfill: Client
INSERT INTO "records"."CustomFieldSortValue" ("businessId", "entity", "key", "recordId", "absent", "number", "text")
SELECT r."businessId", d."entity", d."key", r."id", (r."customFields" ->> d."key") IS NULL,
  CASE WHEN (r."customFields" ->> d."key") IS NULL THEN 0 WHEN d."type" = 'boolean' THEN ((r."customFields" ->> d."key"))::boolean::int WHEN d."type" IN ('number', 'integer', 'boolean') THEN ((r."customFields" ->> d."key"))::numeric ELSE 0 END,
  CASE WHEN (r."customFields" ->> d."key") IS NULL OR d."type" IN ('number', 'integer', 'boolean') THEN '' ELSE (r."customFields" ->> d."key") END
FROM "records"."Client" AS r JOIN "records"."CustomFieldDefinition" AS d ON d."businessId" = r."businessId" AND d."entity" = 'client' AND d."type" <> 'multiSelect';

-- Backfill: Contact
INSERT INTO "records"."CustomFieldSortValue" ("businessId", "entity", "key", "recordId", "absent", "number", "text")
SELECT r."businessId", d."entity", d."key", r."id", (r."customFields" ->> d."key") IS NULL,
  CASE WHEN (r."customFields" ->> d."key") IS NULL THEN 0 WHEN d."type" = 'boolean' THEN ((r."customFields" ->> d."key"))::boolean::int WHEN d."type" IN ('number', 'integer', 'boolean') THEN ((r."customFields" ->> d."key"))::numeric ELSE 0 END,
  CASE WHEN (r."customFields" ->> d."key") IS NULL OR d."type" IN ('number', 'integer', 'boolean') THEN '' ELSE (r."customFields" ->> d."key") END
FROM "records"."Contact" AS r JOIN "records"."CustomFieldDefinition" AS d ON d."businessId" = r."businessId" AND d."entity" = 'contact' AND d."type" <> 'multiSelect';

-- Backfill: Invoice
INSERT INTO "records"."CustomFieldSortValue" ("businessId", "entity", "key", "recordId", "absent", "number", "text")
SELECT r."businessId", d."entity", d."key", r."id", (r."customFields" ->> d."key") IS NULL,
  CASE WHEN (r."customFields" ->> d."key") IS NULL THEN 0 WHEN d."type" = 'boolean' THEN ((r."customFields" ->> d."key"))::boolean::int WHEN d."type" IN ('number', 'integer', 'boolean') THEN ((r."customFields" ->> d."key"))::numeric ELSE 0 END,
  CASE WHEN (r."customFields" ->> d."key") IS NULL OR d."type" IN ('number', 'integer', 'boolean') THEN '' ELSE (r."customFields" ->> d."key") END
FROM "records"."Invoice" AS r JOIN "records"."CustomFieldDefinition" AS d ON d."businessId" = r."businessId" AND d."entity" = 'invoice' AND d."type" <> 'multiSelect';

-- Backfill: Quote
INSERT INTO "records"."CustomFieldSortValue" ("businessId", "entity", "key", "recordId", "absent", "number", "text")
SELECT r."businessId", d."entity", d."key", r."id", (r."customFields" ->> d."key") IS NULL,
  CASE WHEN (r."customFields" ->> d."key") IS NULL THEN 0 WHEN d."type" = 'boolean' THEN ((r."customFields" ->> d."key"))::boolean::int WHEN d."type" IN ('number', 'integer', 'boolean') THEN ((r."customFields" ->> d."key"))::numeric ELSE 0 END,
  CASE WHEN (r."customFields" ->> d."key") IS NULL OR d."type" IN ('number', 'integer', 'boolean') THEN '' ELSE (r."customFields" ->> d."key") END
FROM "records"."Quote" AS r JOIN "records"."CustomFieldDefinition" AS d ON d."businessId" = r."businessId" AND d."entity" = 'quote' AND d."type" <> 'multiSelect';

-- Backfill: Product
INSERT INTO "records"."CustomFieldSortValue" ("businessId", "entity", "key", "recordId", "absent", "number", "text")
SELECT r."businessId", d."entity", d."key", r."id", (r."customFields" ->> d."key") IS NULL,
  CASE WHEN (r."customFields" ->> d."key") IS NULL THEN 0 WHEN d."type" = 'boolean' THEN ((r."customFields" ->> d."key"))::boolean::int WHEN d."type" IN ('number', 'integer', 'boolean') THEN ((r."customFields" ->> d."key"))::numeric ELSE 0 END,
  CASE WHEN (r."customFields" ->> d."key") IS NULL OR d."type" IN ('number', 'integer', 'boolean') THEN '' ELSE (r."customFields" ->> d."key") END
FROM "records"."Product" AS r JOIN "records"."CustomFieldDefinition" AS d ON d."businessId" = r."businessId" AND d."entity" = 'product' AND d."type" <> 'multiSelect';

-- Backfill: Service
INSERT INTO "records"."CustomFieldSortValue" ("businessId", "entity", "key", "recordId", "absent", "number", "text")
SELECT r."businessId", d."entity", d."key", r."id", (r."customFields" ->> d."key") IS NULL,
  CASE WHEN (r."customFields" ->> d."key") IS NULL THEN 0 WHEN d."type" = 'boolean' THEN ((r."customFields" ->> d."key"))::boolean::int WHEN d."type" IN ('number', 'integer', 'boolean') THEN ((r."customFields" ->> d."key"))::numeric ELSE 0 END,
  CASE WHEN (r."customFields" ->> d."key") IS NULL OR d."type" IN ('number', 'integer', 'boolean') THEN '' ELSE (r."customFields" ->> d."key") END
FROM "records"."Service" AS r JOIN "records"."CustomFieldDefinition" AS d ON d."businessId" = r."businessId" AND d."entity" = 'service' AND d."type" <> 'multiSelect';

-- Backfill: Employee
INSERT INTO "records"."CustomFieldSortValue" ("businessId", "entity", "key", "recordId", "absent", "number", "text")
SELECT r."businessId", d."entity", d."key", r."id", (r."customFields" ->> d."key") IS NULL,
  CASE WHEN (r."customFields" ->> d."key") IS NULL THEN 0 WHEN d."type" = 'boolean' THEN ((r."customFields" ->> d."key"))::boolean::int WHEN d."type" IN ('number', 'integer', 'boolean') THEN ((r."customFields" ->> d."key"))::numeric ELSE 0 END,
  CASE WHEN (r."customFields" ->> d."key") IS NULL OR d."type" IN ('number', 'integer', 'boolean') THEN '' ELSE (r."customFields" ->> d."key") END
FROM "records"."Employee" AS r JOIN "records"."CustomFieldDefinition" AS d ON d."businessId" = r."businessId" AND d."entity" = 'employee' AND d."type" <> 'multiSelect';
