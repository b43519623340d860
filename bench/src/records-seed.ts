// Bulk seeding for the records benchmark: N clients in one business, written with plain SQL but
// row for row what `POST /api/v1/client` would have written (uuidv7 ids in creation order, the same
// column values, createdAt = updatedAt, the business's record count), then ANALYZE so the planner
// sees the real sizes.
import { uuidv7 } from "@crm/contracts";
import type { Client } from "pg";

const FIRST = ["Ada", "Grace", "Alan", "Edsger", "Barbara", "Donald", "Margaret", "Ken", "Frances", "John", "Radia", "Dennis", "Sophie", "Tim", "Anita", "Leslie"];
const LAST = ["Lovelace", "Hopper", "Turing", "Dijkstra", "Liskov", "Knuth", "Hamilton", "Thompson", "Allen", "Backus", "Perlman", "Ritchie", "Wilson", "Lee", "Borg", "Lamport"];

/** The client table's columns, in the order the seed and the peer's copy use. */
export const CLIENT_COLUMNS = ["id", "businessId", "firstName", "lastName", "email", "phone", "companyName", "notes", "isActive", "createdAt", "updatedAt"] as const;

/** The last name the seed gives client `i` (many distinct ones, so ordering by lastName is a real sort, not 16 ties). */
export function seededLastName(i: number): string {
  return `${LAST[(i * 7) % LAST.length]!}-${(i * 7919) % 10007}`;
}

/**
 * Custom field values (extensions §E4) each seeded client holds: `constant` ones, the same on every
 * client, and its own last name and `isActive` under two keys, so a query on those custom fields selects
 * and orders exactly what the same one on `lastName` and `isActive` does. The business must define them first.
 */
export interface SeededCustomValues {
  constant: Record<string, unknown>;
  lastNameKey: string;
  isActiveKey: string;
}

/**
 * The sort values a create writes (crm-records' custom-field-sort.ts, D35): a row per record and sortable
 * definition of the business (every type but multiSelect), absent/number/text: a number as numeric, a
 * boolean as 0 or 1, anything else as its text ('' and 0 where a column does not apply). Defining a field
 * on a business that already holds the records would write the same rows, but at 100,000 clients one
 * definition outlasted the gateway's 30 s time-out. The seed's values are short: no LONG_TEXT rows.
 */
const SORT_VALUES_OF_RECORDS = `
  INSERT INTO "records"."CustomFieldSortValue" ("businessId", "entity", "key", "recordId", "absent", "number", "text")
  SELECT r."businessId", 'client', d."key", r."id", v."value" IS NULL,
    CASE WHEN v."value" IS NULL THEN 0 WHEN d."type" = 'boolean' THEN v."value"::boolean::int WHEN d."type" IN ('number', 'integer') THEN v."value"::numeric ELSE 0 END,
    CASE WHEN v."value" IS NULL OR d."type" IN ('number', 'integer', 'boolean') THEN '' ELSE v."value" END
  FROM "records"."Client" AS r
  JOIN "records"."CustomFieldDefinition" AS d ON d."businessId" = r."businessId" AND d."entity" = 'client' AND d."type" <> 'multiSelect'
  CROSS JOIN LATERAL (SELECT r."customFields" ->> d."key") AS v ("value")
  WHERE r."businessId" = $1::uuid AND r."id" = ANY($2::uuid[])`;

/** Inserts `count` clients of `businessId`, created one second apart ending now; 80% active, as in issue 9. */
export async function seedClients(db: Client, businessId: string, count: number, custom?: SeededCustomValues): Promise<void> {
  const batch = 5000;
  const end = Date.now() - 60_000;
  for (let start = 0; start < count; start += batch) {
    const ids: string[] = [];
    const first: string[] = [];
    const last: string[] = [];
    const emails: (string | null)[] = [];
    const phones: (string | null)[] = [];
    const companies: (string | null)[] = [];
    const active: boolean[] = [];
    const created: string[] = [];
    for (let i = start; i < Math.min(count, start + batch); i++) {
      const at = end - (count - i) * 1000;
      const f = FIRST[i % FIRST.length]!;
      const l = seededLastName(i);
      ids.push(uuidv7(at));
      first.push(f);
      last.push(l);
      emails.push(i % 10 === 0 ? null : `${f}.${l}.${i}@example.test`.toLowerCase());
      phones.push(i % 3 === 0 ? `+1 555 ${String(i).padStart(7, "0")}` : null);
      companies.push(i % 4 === 0 ? `Company ${i % 997}` : null);
      active.push(i % 5 !== 0);
      created.push(new Date(at).toISOString());
    }
    await db.query(
      `INSERT INTO "records"."Client" ("id","businessId","firstName","lastName","email","phone","companyName","notes","isActive","createdAt","updatedAt","customFields")
       SELECT u.id, $1::uuid, u.f, u.l, u.e, u.p, u.c, NULL, u.a, u.t, u.t,
         CASE WHEN $11::text IS NULL THEN $10::jsonb ELSE $10::jsonb || jsonb_build_object($11::text, u.l, $12::text, u.a) END
       FROM unnest($2::uuid[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::bool[], $9::timestamptz[]) AS u(id, f, l, e, p, c, a, t)`,
      [businessId, ids, first, last, emails, phones, companies, active, created, JSON.stringify(custom?.constant ?? {}), custom?.lastNameKey ?? null, custom?.isActiveKey ?? null],
    );
    if (custom) await db.query(SORT_VALUES_OF_RECORDS, [businessId, ids]);
  }
  // The count every create keeps in its transaction (records.RecordCount), as if each had been a POST.
  await db.query(
    `INSERT INTO "records"."RecordCount" ("businessId", "entity", "slot", "count") VALUES ($1::uuid, 'client', 0, $2)
     ON CONFLICT ("businessId", "entity", "slot") DO UPDATE SET "count" = "RecordCount"."count" + EXCLUDED."count"`,
    [businessId, count],
  );
}

/**
 * The peer's own copy of the same rows (schema `peer`), with the indexes a hand-written server
 * would create for the queries it serves. A copy, so the peer's indexes never help the product.
 */
export async function preparePeerTables(db: Client): Promise<void> {
  await db.query(`
    DROP SCHEMA IF EXISTS peer CASCADE;
    CREATE SCHEMA peer;
    CREATE TABLE peer.client (LIKE "records"."Client" INCLUDING DEFAULTS);
    INSERT INTO peer.client SELECT * FROM "records"."Client";
    ALTER TABLE peer.client ADD PRIMARY KEY (id);
    CREATE INDEX ON peer.client ("businessId", "createdAt" DESC, id DESC);
    CREATE INDEX ON peer.client ("businessId", "isActive", "lastName", id);
    CREATE TABLE peer.outbox (
      sequence BIGSERIAL PRIMARY KEY, id UUID NOT NULL, topic TEXT NOT NULL, key TEXT NOT NULL, payload JSONB NOT NULL,
      "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP, "sentAt" TIMESTAMPTZ(3));
    CREATE INDEX ON peer.outbox ("sentAt", sequence);
    ANALYZE peer.client;
    ANALYZE "records"."Client";
  `);
}
