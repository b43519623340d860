// The migration that stores payloads once per event must carry existing deliveries over: applied on a
// database holding rows of the previous schema, every delivery keeps exactly the bytes it had.
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { Client } from "pg";
import { createTestDatabase, describePostgres } from "@crm/testing";

const migrations = path.resolve(__dirname, "../prisma/migrations");
const sqlOf = (name: string) => readFileSync(path.join(migrations, readdirSync(migrations).find((d) => d.endsWith(name))!, "migration.sql"), "utf8");

describePostgres("migration payload_once_per_event", () => {
  it("moves existing bodies into one payload per event and one per test delivery", async () => {
    const db = await createTestDatabase("webhooks_migration");
    const client = new Client({ connectionString: db.url });
    await client.connect();
    try {
      await client.query(`CREATE SCHEMA "webhooks"; SET search_path TO "webhooks"`);
      await client.query(sqlOf("_init"));
      const hooks = ["0190f6c4-0000-7000-8000-000000000001", "0190f6c4-0000-7000-8000-000000000002"];
      for (const id of hooks) {
        await client.query(
          `INSERT INTO "webhooks"."Webhook" (id, "businessId", url, events, secret, "secretPrefix", "updatedAt") VALUES ($1, 'b', 'https://x.test', '{client.created}', 's', 'p', now())`,
          [id],
        );
      }
      const rows: Array<[string, string, string | null, string]> = [
        ["0190f6c4-0000-7000-8000-00000000000a", hooks[0]!, "event-1", '{"event":"client.created","n":1}'],
        ["0190f6c4-0000-7000-8000-00000000000b", hooks[1]!, "event-1", '{"event":"client.created","n":1}'],
        ["0190f6c4-0000-7000-8000-00000000000c", hooks[0]!, "event-2", '{"event":"client.created","n":2}'],
        ["0190f6c4-0000-7000-8000-00000000000d", hooks[0]!, null, '{"event":"webhook.test"}'],
        ["0190f6c4-0000-7000-8000-00000000000e", hooks[1]!, null, '{"event":"webhook.test"}'],
      ];
      for (const [id, webhookId, eventId, payload] of rows) {
        await client.query(
          `INSERT INTO "webhooks"."Delivery" (id, "webhookId", "businessId", "eventId", event, payload, "updatedAt") VALUES ($1, $2, 'b', $3, 'client.created', $4, now())`,
          [id, webhookId, eventId, payload],
        );
      }

      await client.query(sqlOf("_payload_once_per_event"));

      const { rows: after } = await client.query<{ id: string; payloadId: string; body: string; eventId: string | null }>(
        `SELECT d.id, d."payloadId", p.body, p."eventId" FROM "webhooks"."Delivery" d JOIN "webhooks"."Payload" p ON p.id = d."payloadId" ORDER BY d.id`,
      );
      expect(after.map((r) => [r.id, r.body])).toEqual(rows.map(([id, , , payload]) => [id, payload]));
      expect(after[0]!.payloadId).toBe(after[1]!.payloadId);
      expect(new Set(after.map((r) => r.payloadId)).size).toBe(4);
      const { rows: count } = await client.query<{ n: number }>(`SELECT count(*)::int AS n FROM "webhooks"."Payload"`);
      expect(count[0]!.n).toBe(4);
    } finally {
      await client.end();
      await db.drop();
    }
  });
});
