// What the plan tests share: a repository whose statements are captured instead of run, and the generic
// plan PostgreSQL (or PGlite) chooses for a captured statement, as a prepared statement runs it after its
// first executions.
import type { SqlRunner } from "@crm/database";
import { DeliveryRepository } from "../../src/persistence/delivery.repository";

export type CapturedStatement = { name: string; text: string; params: unknown[] };

/** A repository whose statements are recorded in `sent` (text, values, prepared name); each answers `rows`. */
export function capturingRepository(rows: unknown[] = []): { repository: DeliveryRepository; sent: CapturedStatement[] } {
  const sent: CapturedStatement[] = [];
  const sql: SqlRunner = {
    exec: async () => undefined,
    query: async <T>(text: string, params?: unknown[], options?: { name?: string }) => {
      sent.push({ name: options?.name ?? "", text, params: params ?? [] });
      return { rows: rows as T[] };
    },
  };
  return { repository: new DeliveryRepository(undefined as never, sql), sent };
}

/** A parameter as a literal of EXECUTE's argument list (the prepared statement gives it its type). */
export function literal(value: unknown): string {
  if (value instanceof Date) return `'${value.toISOString()}'`;
  if (typeof value === "number") return String(value);
  if (Array.isArray(value)) return `'{${value.map((v) => (v instanceof Date ? `"${v.toISOString()}"` : `"${String(v).replaceAll('"', '\\"')}"`)).join(",")}}'`;
  return `'${String(value).replaceAll("'", "''")}'`;
}

/** The generic plan of `statement`, as JSON text (run on one connection: the caller's session settings apply). */
export async function genericPlan(sql: SqlRunner, statement: Pick<CapturedStatement, "text" | "params">): Promise<string> {
  await sql.query(`PREPARE probe AS ${statement.text}`);
  try {
    const rows = await sql.query<Record<string, unknown>>(`EXPLAIN (FORMAT JSON) EXECUTE probe(${statement.params.map(literal).join(", ")})`);
    return JSON.stringify(rows);
  } finally {
    await sql.query("DEALLOCATE probe");
  }
}

/**
 * 4 businesses (`${prefix}0` to `${prefix}3`) x 10 webhooks x 200 events, each delivery created PENDING and
 * then delivered, as the product does: the partial indexes keep their entries of the PENDING versions until
 * VACUUM. Event e of a business is `old-<b>-<e>`, created e x `createdEveryHours` ago (0: all now).
 */
export async function seedDeliveredHistory(sql: SqlRunner, prefix: string, createdEveryHours = 0): Promise<void> {
  const createdAt = `now() - (split_part(p."eventId", '-', 3)::int * interval '${createdEveryHours} hours')`;
  await sql.exec(`
    INSERT INTO webhooks."Webhook" (id, "businessId", url, events, secret, "secretPrefix", "updatedAt")
    SELECT gen_random_uuid(), '${prefix}' || b, 'https://example.com/hook', '{client.created}', 's', 'p', now()
    FROM generate_series(0, 3) AS b, generate_series(1, 10);
    INSERT INTO webhooks."Payload" (id, "eventId", body) SELECT gen_random_uuid(), 'old-' || b || '-' || e, '{}' FROM generate_series(0, 3) AS b, generate_series(1, 200) AS e;
    INSERT INTO webhooks."Delivery" (id, "webhookId", "businessId", "eventId", event, "payloadId", status, attempt, "nextRetryAt", "createdAt", "updatedAt")
    SELECT gen_random_uuid(), w.id, w."businessId", p."eventId", 'client.created', p.id, 'PENDING', 0, now() - interval '1 hour', ${createdAt}, ${createdAt}
    FROM webhooks."Webhook" AS w JOIN webhooks."Payload" AS p ON p."eventId" LIKE 'old-' || substr(w."businessId", ${prefix.length + 1}) || '-%';
    UPDATE webhooks."Delivery" SET status = 'SUCCESS', attempt = 1, "nextRetryAt" = NULL;`);
}

/**
 * Work owed, due a minute ago: `events` new events (`${tag}-<e>`) for each of `business`'s webhooks, as
 * first attempts (PENDING, attempt 0) or retries (RETRYING, attempt 1).
 */
export async function seedWorkOwed(sql: SqlRunner, options: { business: string; tag: string; events: number; status: "PENDING" | "RETRYING" }): Promise<void> {
  const { business, tag, events, status } = options;
  await sql.exec(`
    INSERT INTO webhooks."Payload" (id, "eventId", body) SELECT gen_random_uuid(), '${tag}-' || e, '{}' FROM generate_series(1, ${events}) AS e;
    INSERT INTO webhooks."Delivery" (id, "webhookId", "businessId", "eventId", event, "payloadId", status, attempt, "nextRetryAt", "updatedAt")
    SELECT gen_random_uuid(), w.id, w."businessId", p."eventId", 'client.created', p.id, '${status}', ${status === "PENDING" ? 0 : 1}, now() - interval '1 minute', now()
    FROM webhooks."Webhook" AS w JOIN webhooks."Payload" AS p ON p."eventId" LIKE '${tag}-%' WHERE w."businessId" = '${business}';`);
}
