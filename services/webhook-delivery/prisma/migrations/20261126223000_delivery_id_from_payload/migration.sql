-- A delivery of an event gets an id derived from its payload and webhook, and the primary key carries
-- what the unique ("payloadId", "webhookId") index did: a re-delivered event finds its payload again, so
-- its records get the same ids and create nothing twice (ON CONFLICT (id) DO NOTHING). One unique index
-- fewer: one entry and one uniqueness check fewer at every create and at every outcome (an outcome moves
-- status, so it is not a HOT update and writes an entry in every index).
--
-- The id: the payload id's first 8 bytes (a UUID v7's 48-bit creation time, its version and 12 random
-- bits), then 8 bytes of SHA-256 over the payload and webhook ids with the variant bits set. So it stays
-- a time-ordered UUID v7 (its time is the event's payload's), the same on every attempt and for the same
-- event and webhook: X-Service-Delivery-Id is there for de-duplication. Test deliveries keep a random
-- tail after their own payload's 8 bytes.
--
-- What read the unique index by its first column, "a delivery of this payload" (payload retention, the
-- trigger on Payload), reads the primary key's range of that payload's 8 bytes instead; a row whose id
-- does not start with its payload's 8 bytes (created before this migration, or by hand) is in a partial
-- ("payloadId") index that new deliveries never enter. The two lookups together cover every row.
--
-- An older build must be stopped before this migration runs: its creates name the dropped index in ON
-- CONFLICT ("payloadId", "webhookId").
CREATE FUNCTION "webhooks"."delivery_id"(payload uuid, webhook uuid) RETURNS uuid LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT encode(set_bit(set_bit(overlay(uuid_send(payload) PLACING substring(sha256(uuid_send(payload) || uuid_send(webhook)) FROM 1 FOR 8) FROM 9 FOR 8), 71, 1), 70, 0), 'hex')::uuid
$$;
-- The ids a payload's deliveries can have (but for the partial index's rows): its first 8 bytes, then anything.
CREATE FUNCTION "webhooks"."payload_delivery_ids_from"(payload uuid) RETURNS uuid LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT encode(overlay(uuid_send(payload) PLACING '\x0000000000000000'::bytea FROM 9 FOR 8), 'hex')::uuid
$$;
CREATE FUNCTION "webhooks"."payload_delivery_ids_to"(payload uuid) RETURNS uuid LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT encode(overlay(uuid_send(payload) PLACING '\xffffffffffffffff'::bytea FROM 9 FOR 8), 'hex')::uuid
$$;
CREATE INDEX "Delivery_payloadId_other_ids_idx" ON "webhooks"."Delivery" ("payloadId", "webhookId")
  WHERE substring(uuid_send(id) FROM 1 FOR 8) <> substring(uuid_send("payloadId") FROM 1 FOR 8);

CREATE OR REPLACE FUNCTION "webhooks"."keep_referenced_payloads"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  -- Per deleted payload, a probe of each: as a join, the range's default selectivity can make the planner
  -- hash a scan of the whole table, and so can the partial index's rows, which it cannot count (OFFSET 0
  -- keeps that subquery as it is written).
  IF EXISTS (
    SELECT 1 FROM deleted
    WHERE EXISTS (SELECT 1 FROM "webhooks"."Delivery" AS d
                  WHERE d.id BETWEEN "webhooks"."payload_delivery_ids_from"(deleted.id) AND "webhooks"."payload_delivery_ids_to"(deleted.id) AND d."payloadId" = deleted.id)
       OR EXISTS (SELECT 1 FROM "webhooks"."Delivery" AS d
                  WHERE d."payloadId" = deleted.id AND substring(uuid_send(d.id) FROM 1 FOR 8) <> substring(uuid_send(d."payloadId") FROM 1 FOR 8)
                  OFFSET 0)
  ) THEN
    RAISE EXCEPTION 'a payload a delivery refers to cannot be deleted' USING ERRCODE = 'foreign_key_violation';
  END IF;
  RETURN NULL;
END
$$;
DROP INDEX "webhooks"."Delivery_payloadId_webhookId_key";
