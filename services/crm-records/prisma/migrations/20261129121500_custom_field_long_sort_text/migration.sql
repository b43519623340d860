-- Extensions §E4, docs/performance.md D35: a sort value's text longer than 2,000 bytes is not held in
-- the sort index any more (an incompressible one exceeded the btree entry's maximum and failed its
-- write). Its row holds number 1 and text '', and its order is read from the record's value, as
-- custom-field-sort.ts (sortColumnsSql, WHOLE_TEXT_BYTES, LONG_TEXT) now writes it. Only text-sorted
-- rows hold a text, so only theirs change; the lock wait is bounded.
SET LOCAL lock_timeout = '5s';

UPDATE "records"."CustomFieldSortValue" SET "number" = 1, "text" = '' WHERE octet_length("text") > 2000;
