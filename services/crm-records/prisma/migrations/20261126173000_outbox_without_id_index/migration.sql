-- The envelope's id needs no index of its own: nothing reads an outbox row by it (the relay reads by
-- sequence; consumers de-duplicate on the id themselves), and it is a UUID v7 made per event, so the
-- unique index only guarded against a collision that cannot happen. It cost an index entry on every
-- record write's event and another on every mark as sent (a mark is not a HOT update: sentAt is in
-- the retention and pending indexes), docs/performance.md.
DROP INDEX "records"."OutboxEvent_id_key";
